"""cc-NUMA node-controller contention (model kind ``ccnuma``): processors as customers,
node controllers as FCFS centres, visit ratios and demands from the cc-NUMA simulator
(``mva simulate WORKLOAD --machine ccnuma``) under each page placement and proxy option."""
from .model import PARAMETERS, CCNUMA

__all__ = ["CCNUMA", "PARAMETERS"]
