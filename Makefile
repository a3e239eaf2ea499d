# cgstream: kernel series + libcgstream + pycgstream + systemd units.
#
#   make demo    set up, build, boot the patched kernel, stream a few cgroups
#   make check   set up, build, run every host test and every VM test
#
# See README.md.

# The one place the kernel series is pinned (Debian's linux-source-$(KERNEL_SERIES)).
KERNEL_SERIES := 7.2

CACHE       ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/cgstream
BUILD       := $(CURDIR)/build
KTREE       := $(BUILD)/linux
KOBJ        := $(BUILD)/obj
BZIMAGE     := $(KOBJ)/arch/x86/boot/bzImage
KOBJ_BENCH  := $(BUILD)/obj-bench
KOBJ_KASAN  := $(BUILD)/obj-kasan
KOBJ_KCSAN  := $(BUILD)/obj-kcsan
VENV        := $(CURDIR)/.venv
SERIES_OUT  := $(BUILD)/series
VM_CPUS     ?= 2
VM_MEMORY   ?= 2G
export CGSTREAM_TOP := $(CURDIR)

PREFIX      ?= /usr/local
DESTDIR     ?=

.PHONY: all deps kernel kernel-bench kernel-tree kernel-tree-kcsan kernel-series kernel-sync vm-run vm-shell \
	check check-host check-vm check-systemd userspace demo bench install uninstall clean distclean \
	kernel-kasan kernel-kcsan kernel-irqoff stress

all: userspace

deps:
	@scripts/deps.sh $(VENV)

# --- kernel ---------------------------------------------------------------
kernel-tree:
	@scripts/kernel-tree.sh $(KERNEL_SERIES) $(CACHE) $(KTREE) $(CURDIR)

# the series with kernel/independent (KCSAN annotations) on top, in $(KTREE)-kcsan
kernel-tree-kcsan:
	@scripts/kernel-tree.sh --kcsan $(KERNEL_SERIES) $(CACHE) $(KTREE) $(CURDIR)

kernel: kernel-tree
	@scripts/kernel-build.sh $(KTREE) $(KOBJ) scripts/vm/kernel.config $(CACHE)/ccache

# the benchmark kernel: the same tree without the debug checks (lockdep...)
kernel-bench: kernel-tree
	@scripts/kernel-build.sh $(KTREE) $(KOBJ_BENCH) scripts/vm/kernel.config:scripts/vm/bench.config $(CACHE)/ccache

# sanitizer test kernels for `make stress`: the test kernel plus KASAN, or
# plus KCSAN (scripts/vm/kasan.config, kcsan.config)
kernel-kasan: kernel-tree
	@scripts/kernel-build.sh $(KTREE) $(KOBJ_KASAN) scripts/vm/kernel.config:scripts/vm/kasan.config $(CACHE)/ccache

# the interrupts-off measurement kernel (bench/irqoff/measure.sh): the
# series plus a measurement-only patch, in a tree of its own, built as
# the bench kernel plus the irqsoff tracer
kernel-irqoff: kernel-tree
	@scripts/kernel-tree-measure.sh $(KTREE) $(KTREE)-irqoff bench/irqoff/stream-irqoff-measure.patch
	@scripts/kernel-build.sh $(KTREE)-irqoff $(BUILD)/obj-irqoff scripts/vm/kernel.config:scripts/vm/bench.config:bench/irqoff/irqoff.config $(CACHE)/ccache

kernel-kcsan: kernel-tree-kcsan
	@scripts/kernel-build.sh $(KTREE)-kcsan $(KOBJ_KCSAN) scripts/vm/kernel.config:scripts/vm/kcsan.config $(CACHE)/ccache

kernel-series: kernel-tree
	@scripts/kernel-series.sh $(KTREE) $(SERIES_OUT)

kernel-sync:
	@scripts/kernel-sync.sh $(KTREE) $(CURDIR)

# --- VM -------------------------------------------------------------------
vm-run:
	@test -n "$(CMD)" || { echo "usage: make vm-run CMD='command'"; exit 2; }
	@scripts/vm/vm-run.sh --cpus $(VM_CPUS) --memory $(VM_MEMORY) -- "$$CMD"

vm-shell:
	@scripts/vm/vm-run.sh --shell --cpus $(VM_CPUS) --memory $(VM_MEMORY)

# --- userspace ------------------------------------------------------------
userspace:
	@$(MAKE) -s -C libcgstream
	@$(MAKE) -s -C tests/kselftest

# --- tests ----------------------------------------------------------------
# the kernel is built by tests/check.sh, beside the host tests
check: deps kernel-tree userspace
	@MAKE="$(MAKE)" tests/check.sh

check-host: userspace
	@tests/host/run.sh

check-vm: userspace
	@CGSTREAM_VM_SETTLE=12 scripts/vm/vm-run.sh --cpus $(VM_CPUS) --memory $(VM_MEMORY) \
		--out $(BUILD)/vm-check -- tests/vm/run.sh

# systemd as PID 1, patched and stock kernel (also the last stage of `check`)
check-systemd: userspace
	@CGSTREAM_VM_TIMEOUT=$${CGSTREAM_VM_TIMEOUT:-1500} tests/vm-systemd/run.sh --out $(BUILD)/vm-systemd

# --- demo, benchmarks -----------------------------------------------------
demo: deps kernel userspace
	@scripts/vm/vm-run.sh --cpus $(VM_CPUS) --memory $(VM_MEMORY) -- scripts/demo.sh

bench: deps kernel-bench userspace
	@BENCH_KERNEL=$${BENCH_KERNEL:-$(KOBJ_BENCH)/arch/x86/boot/bzImage} bench/run.sh

# 10 minutes of randomized stress (tests/stress) on each of the lockdep,
# KASAN and KCSAN kernels, written up in docs/reliability.md from each
# kernel's digest in docs/reliability/<kernel>/; builds the kernels
# itself, to time them
stress: deps kernel-tree
	@MAKE="$(MAKE)" tests/stress/make-stress.sh

# The library, the command, its man page, the units and pycgstream: what a
# machine runs.  Neither the kernel tree nor the test programs are needed
# (nor built): a fresh clone installs on a stock kernel.  ldconfig runs
# when installing to the running system (DESTDIR empty).
install:
	@$(MAKE) -s -C libcgstream install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	@$(MAKE) -s -C systemd install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	@$(MAKE) -s -C pycgstream install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

# everything install put there (an /etc/cgstream file the admin changed stays)
uninstall:
	@$(MAKE) -s -C pycgstream uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	@$(MAKE) -s -C systemd uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	@$(MAKE) -s -C libcgstream uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

clean:
	rm -rf $(BUILD)/vm-* $(SERIES_OUT)
	-@$(MAKE) -s -C libcgstream clean
	-@$(MAKE) -s -C tests/kselftest clean

distclean: clean
	rm -rf $(BUILD) $(VENV)
