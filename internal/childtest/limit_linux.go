package childtest

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// limitAddressSpace limits the process's address space to what it maps now plus extra bytes.
func limitAddressSpace(extra int64) error {
	vm := vmSize()
	if vm < 0 {
		return errors.New("cannot read VmSize from /proc/self/status")
	}
	lim := uint64(vm + extra)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		return err
	}
	var got syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &got); err != nil {
		return err
	}
	if got.Cur != lim {
		return fmt.Errorf("RLIMIT_AS is %d bytes after setting it to %d", got.Cur, lim)
	}
	return nil
}

// vmSize returns the process's address-space size from /proc/self/status, -1 if unknown.
func vmSize() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmSize:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return -1
}
