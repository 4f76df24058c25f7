"""A fine-grained multithreaded chip (model kind ``cmt_core``): hardware threads as the
customers of their cores' pipelines and of the memory channel, solved by exact MVA; the
analytical counterpart of the shared-L2 simulator (``mva simulate --machine cmt``)."""
from .model import PARAMETERS, CMTCore, cmt_network

__all__ = ["CMTCore", "PARAMETERS", "cmt_network"]
