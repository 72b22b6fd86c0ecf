"""weft: collective communication. `import weft.torch` registers the torch.distributed
backend "weft" (see docs/TORCH.md)."""

__version__ = "0.1.0"
