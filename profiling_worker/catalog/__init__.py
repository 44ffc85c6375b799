"""Built-in kernel catalog: pure declarations in :mod:`.specs`, torch bodies in :mod:`.kernels`."""
