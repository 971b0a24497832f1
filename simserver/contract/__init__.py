"""The contract between the world and its outputs: the per-tick
:class:`~simserver.contract.snapshot.Snapshot` and the topics simserver reads and writes."""
