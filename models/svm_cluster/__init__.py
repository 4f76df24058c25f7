"""Software shared memory on a cluster (model kind ``svm_cluster``): communication,
protocol and application layers, contention by MVA; fed by the SVM simulator
(``mva simulate WORKLOAD --machine svm``)."""
from .model import APP_COUNTERS, COMMUNICATION, PARAMETERS, PROTOCOL, SVMCluster, message_cycles

__all__ = ["SVMCluster", "PARAMETERS", "COMMUNICATION", "PROTOCOL", "APP_COUNTERS", "message_cycles"]
