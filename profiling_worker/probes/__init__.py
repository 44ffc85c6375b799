"""What the worker reads of the machine beside the kernels: installed packages, the job's GPU,
NVML readings and trace, the Nsight Compute preflight."""
