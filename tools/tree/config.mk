# The one place that pins the kernel the series is tested on.
# tools/tree/tree.sh and `make deps` read these values.
KERNEL_PKG := linux-source-6.12
KERNEL_VERSION := 6.12.118-1~deb12u1
KERNEL_TARBALL := /usr/src/linux-source-6.12.tar.xz
