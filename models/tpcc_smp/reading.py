"""The reading of Du & Zhang's Tables 6-8 that the TPC-C model and its simulated machine share:
what one disk access costs, and how fast a processor computes for its CPU count.

One disk access moves ``disk.block_size`` bytes: ``disk.block_size / disk.sector_size`` of
Table 7's sector transfers (the HP 97560's 512-byte sector: 72 a track at 4002 rpm, 41,640
cycles at 200 MHz) and ``disk.block_size / io_bus.transfer_size`` of its I/O bus latencies
(256 bytes at SCSI-2's 10 MB/s, 5,120 cycles); ``data/tpcc/README.md`` gives the evidence.
Times are in cycles.
"""
from __future__ import annotations

__all__ = ["access_times", "processor_speed"]


def access_times(v: dict) -> dict:
    """What one disk access costs in cycles under the reading of Tables 6-8 the values
    take: the disk's access (seek, rotation and ``disk.block_size / disk.sector_size``
    sector transfers), a read's request and its reply over the bus, and a write's data over
    the bus (``disk.block_size / io_bus.transfer_size`` bus latencies each)."""
    sectors = v["disk.block_size"] / v["disk.sector_size"]
    transfers = v["disk.block_size"] / v["io_bus.transfer_size"]
    return {"access": v["disk.seek_time"] + v["disk.rotation_latency"] + sectors * v["disk.transfer_time"],
            "transfer": sectors * v["disk.transfer_time"],
            "request": v["io_bus.request_latency"], "reply": transfers * v["io_bus.reply_latency"],
            "write_bus": transfers * v["io_bus.latency"]}


def processor_speed(values: dict) -> float:
    """``cpu.speed_by_cpus`` for the configuration's CPU count (the last entry for more)."""
    speeds = values["cpu.speed_by_cpus"]
    return float(speeds[min(values["cpus"], len(speeds)) - 1])
