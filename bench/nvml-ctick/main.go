package main

/*
#cgo LDFLAGS: -ldl -lpthread
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

typedef struct { unsigned long long total, free, used; } mem_t;
typedef int (*init_fn)(void);
typedef int (*handle_fn)(unsigned int, void **);
typedef int (*mem_fn)(void *, mem_t *);

static mem_fn getmem;
static void *dev;
static int efd = -1;
static long interval_ns;
static int nvml_on;
static volatile int stop;
static uint64_t cur, acc, thresh, ticks, missed, rises;

static int setup(int use_nvml, long iv) {
	interval_ns = iv;
	nvml_on = use_nvml;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0) return -1;
	if (!use_nvml) return 0;
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	if (!h) return -2;
	init_fn in = (init_fn)dlsym(h, "nvmlInit_v2");
	handle_fn hb = (handle_fn)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	getmem = (mem_fn)dlsym(h, "nvmlDeviceGetMemoryInfo");
	if (!in || !hb || !getmem) return -3;
	if (in() != 0) return -4;
	if (hb(0, &dev) != 0) return -5;
	return 0;
}

static void *loop(void *arg) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	long long start = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
	for (long long k = 1; !stop; ) {
		long long at = start + k * interval_ns;
		struct timespec ts = { at / 1000000000LL, at % 1000000000LL };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
		__atomic_add_fetch(&ticks, 1, __ATOMIC_RELAXED);
		if (nvml_on) {
			mem_t m;
			if (getmem(dev, &m) == 0) {
				__atomic_store_n(&cur, m.used, __ATOMIC_RELAXED);
				uint64_t a = __atomic_load_n(&acc, __ATOMIC_RELAXED);
				while (m.used > a && !__atomic_compare_exchange_n(&acc, &a, m.used, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
				if (m.used > __atomic_load_n(&thresh, __ATOMIC_RELAXED)) {
					__atomic_store_n(&thresh, ~0ULL, __ATOMIC_RELAXED); // Go re-arms
					__atomic_add_fetch(&rises, 1, __ATOMIC_RELAXED);
					uint64_t one = 1;
					if (write(efd, &one, 8) != 8) {}
				}
			}
		}
		k++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long long now = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
		if (now >= start + k * interval_ns) {
			long long skip = (now - start - k * interval_ns) / interval_ns + 1;
			k += skip;
			__atomic_add_fetch(&missed, skip, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static pthread_t th;
static int go_start(void) { return pthread_create(&th, NULL, loop, NULL); }
static void go_stop(void) { stop = 1; pthread_join(th, NULL); }
static uint64_t fold(void) { return __atomic_exchange_n(&acc, 0, __ATOMIC_RELAXED); }
static void arm(uint64_t v) { __atomic_store_n(&thresh, v, __ATOMIC_RELAXED); }
static uint64_t get_cur(void) { return __atomic_load_n(&cur, __ATOMIC_RELAXED); }
static uint64_t get_ticks(void) { return __atomic_load_n(&ticks, __ATOMIC_RELAXED); }
static uint64_t get_missed(void) { return __atomic_load_n(&missed, __ATOMIC_RELAXED); }
static uint64_t get_rises(void) { return __atomic_load_n(&rises, __ATOMIC_RELAXED); }
static int get_efd(void) { return efd; }
*/
import "C"

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	mode := flag.String("mode", "full", "full | ticks (C thread, no NVML) | none (Go fold timer only) | baseline")
	d := flag.Duration("d", 15*time.Second, "measure for")
	fold := flag.Duration("fold", 10*time.Millisecond, "Go-side fold + /proc read interval")
	pid := flag.Int("pid", os.Getpid(), "process whose /proc/PID/status is read every 10 ms")
	flag.Parse()
	if *mode == "baseline" {
		c0, t0 := cpu(), time.Now()
		time.Sleep(*d)
		fmt.Printf("mode=baseline cpu_pct=%.3f\n", 100*(cpu()-c0).Seconds()/time.Since(t0).Seconds())
		return
	}
	use := 0
	if *mode == "full" {
		use = 1
	}
	if r := C.setup(C.int(use), C.long(time.Millisecond)); r != 0 {
		fmt.Println("setup failed", r)
		os.Exit(1)
	}
	if *mode != "none" {
		C.go_start()
	}
	ev := os.NewFile(uintptr(C.get_efd()), "eventfd")
	wakes := 0
	go func() {
		b := make([]byte, 8)
		for {
			if _, err := ev.Read(b); err != nil {
				return
			}
			wakes++
			// what gpumem does on a rise: a per-process query (not made here), then re-arm
			C.arm(C.get_cur())
		}
	}()
	C.arm(C.get_cur())
	buf := make([]byte, 4096)
	status := fmt.Sprintf("/proc/%d/status", *pid)
	var peak uint64
	tk := time.NewTicker(*fold)
	c0, t0 := cpu(), time.Now()
	deadline := t0.Add(*d)
	folds := 0
	for now := range tk.C {
		if m := uint64(C.fold()); m > peak {
			peak = m
		}
		if f, err := os.Open(status); err == nil {
			f.Read(buf)
			f.Close()
		}
		folds++
		if now.After(deadline) {
			break
		}
	}
	c := cpu() - c0
	wall := time.Since(t0)
	if *mode != "none" {
		C.go_stop()
	}
	fmt.Printf("mode=%s cpu_pct=%.3f wall=%.1fs ticks=%d missed=%d rises=%d wakes=%d folds=%d peak_mib=%.0f\n",
		*mode, 100*c.Seconds()/wall.Seconds(), wall.Seconds(), uint64(C.get_ticks()), uint64(C.get_missed()),
		uint64(C.get_rises()), wakes, folds, float64(peak)/(1<<20))
}
