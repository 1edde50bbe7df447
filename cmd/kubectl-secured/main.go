// Command kubectl-secured is the operator's kubectl plugin. Installed on PATH it runs as
// `kubectl secured ...`:
//
//	kubectl secured study report NAME [-n NAMESPACE] [-o text|markdown|json|html]
//
// prints a TradeoffStudy's report: the final one from its report ConfigMap, or, while the
// study runs, the analysis of the repetitions measured so far.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"secured.dev/operator/api/v1alpha1"
	"secured.dev/operator/internal/study"
)

const usage = `usage: kubectl secured study report NAME [-n NAMESPACE] [-o text|markdown|json|html] [--kubeconfig FILE]`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl secured:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) < 3 || args[0] != "study" || args[1] != "report" {
		return errors.New(usage)
	}
	name := args[2]
	fs := flag.NewFlagSet("study report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	namespace := fs.String("n", "", "namespace of the study (default: the kubeconfig context's)")
	format := fs.String("o", "text", "output: text (bar chart), markdown, json, or html (one file with charts, for a browser)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	if err := fs.Parse(args[3:]); err != nil {
		return fmt.Errorf("%v\n%s", err, usage)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return err
	}
	ns := *namespace
	if ns == "" {
		if ns, _, err = loader.Namespace(); err != nil {
			return err
		}
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	r, err := fetch(ctx, c, ns, name)
	if err != nil {
		return err
	}
	switch *format {
	case "text":
		_, err = io.WriteString(out, r.Text())
	case "markdown":
		_, err = io.WriteString(out, r.Markdown())
	case "json":
		var b []byte
		if b, err = r.JSON(); err == nil {
			_, err = out.Write(append(b, '\n'))
		}
	case "html":
		var b []byte
		if b, err = r.HTML(); err == nil {
			_, err = out.Write(b)
		}
	default:
		return fmt.Errorf("-o %s: use text, markdown, json or html", *format)
	}
	return err
}

// fetch reads the final report, or analyses a running study's status.
func fetch(ctx context.Context, c client.Client, namespace, name string) (study.Report, error) {
	var st v1alpha1.TradeoffStudy
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &st); err != nil {
		if apierrors.IsNotFound(err) {
			return study.Report{}, fmt.Errorf("TradeoffStudy %s not found in namespace %s (kubectl get tradeoffstudies -A lists them)", name, namespace)
		}
		return study.Report{}, err
	}
	if cmName := st.Status.ReportConfigMap; cmName != "" {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: cmName}, &cm); err != nil {
			return study.Report{}, fmt.Errorf("reading the report ConfigMap %s: %w", cmName, err)
		}
		return study.ParseReport([]byte(cm.Data[study.ReportJSONKey]))
	}
	if len(st.Status.Cells) == 0 {
		return study.Report{}, fmt.Errorf("TradeoffStudy %s is %s and has no plan yet: kubectl describe tradeoffstudy %s says why", name, st.Status.Phase, name)
	}
	r := study.Analyze(st.Name, &st.Spec, ptr.Deref(st.Status.Seed, 0), st.Status.Cells).Report
	r.Phase = fmt.Sprintf("%s (%d of %d repetitions)", st.Status.Phase, st.Status.NextRun, len(st.Status.Schedule))
	return r, nil
}
