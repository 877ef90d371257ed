"""torch.distributed on ocl tensors: tests that start several processes (ranks.py) on one device."""
