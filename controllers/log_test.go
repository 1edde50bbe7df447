package controllers

import (
	"os"

	"go.uber.org/zap/zapcore"
)

// zapLevel keeps test output quiet unless TEST_LOG=debug.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_LOG") == "debug" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}
