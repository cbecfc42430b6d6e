# SPDX-License-Identifier: GPL-2.0-or-later
#
# The devices of a qhca guest and nothing else (configure
# --without-default-devices --with-devices-x86_64=qhca).  Q35 selects what
# a -kernel boot with a serial console needs: fw_cfg, ACPI, the ISA UART.

CONFIG_Q35=y
CONFIG_PCIE_PORT=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_BLK=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_9P=y
CONFIG_VIRTIO_SERIAL=y
CONFIG_QHCA=y
