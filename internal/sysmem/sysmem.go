// Package sysmem tells how much memory the machine, or the container the process runs in,
// gives it.
package sysmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Total returns the bytes of memory the process may use: the machine's physical memory
// (/proc/meminfo MemTotal), or the cgroup's limit when that is lower (memory.max of cgroup v2,
// memory.limit_in_bytes of v1). ok is false where neither can be read (not Linux).
func Total() (n int64, ok bool) {
	n, ok = memTotal()
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		limit, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64) // "max": no limit
		if err == nil && limit > 0 && (!ok || limit < n) {
			n, ok = limit, true
		}
	}
	return n, ok
}

// memTotal reads MemTotal from /proc/meminfo.
func memTotal() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kib, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kib <= 0 || kib > 1<<53 {
				return 0, false
			}
			return kib << 10, true
		}
	}
	return 0, false
}
