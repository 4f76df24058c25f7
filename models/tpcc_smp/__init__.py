"""TPC-C on a bus-based SMP: the queueing model of Du & Zhang (2001) (model kind ``tpcc_smp``).

``TPCCSMP`` is the model; ``equations`` holds eq. 3.1-3.10 as pure functions, ``reading``
what a disk access and a processor cost under the reading of Tables 6-8, ``data`` the
transcribed tables, ``report`` the reproduction of Tables 10-18, ``simulation`` the
machine the model approximates (``TPCCSMP.simulate``) and ``validation`` the model against it.
"""
from .model import PARAMETERS, TPCCSMP, class_populations, disk_visit_scale_from_table12

__all__ = ["TPCCSMP", "PARAMETERS", "class_populations", "disk_visit_scale_from_table12"]
