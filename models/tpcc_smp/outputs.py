"""The outputs of the TPC-C SMP model and their units, shared by the analytic model
(:mod:`models.tpcc_smp.model`) and the simulation of its machine
(:mod:`models.tpcc_smp.simulation`), so that neither imports the other for them."""

__all__ = ["OUTPUT_UNITS"]

#: Unit of each output by name; utilisations are fractions and have none.
OUTPUT_UNITS = {"tpmC": "New-Order/min", "throughput": "transactions/s", "response_time": "s",
                "residence_time": "s"}
