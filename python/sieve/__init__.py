"""Sieve: an embedded vector database with exact, attribute-filtered k-nearest-neighbour
search on the CPU or an NVIDIA GPU.

Embedded (the engine runs in this process)::

    import numpy as np, sieve
    db = sieve.open("/tmp/db")
    items = db.create_collection("items", dim=128, metric="l2",
                                 attributes={"price": "float", "color": "string"})
    items.ingest(vectors, attributes={"price": prices, "color": colors})
    ids, distances = items.search(queries, k=10, filter="price < 20 AND color = 'red'")

Against a server (``sieve serve DB``), the same collection API
(:class:`sieve.RemoteCollection`)::

    client = sieve.Client("http://127.0.0.1:8080")
    ids, distances = client["items"].search(queries, k=10, filter="price < 20")

Over many hosts, on Ray (``pip install ray``), :class:`sieve.ray.ShardedCollection` spreads
one collection over shard actors with the same collection API (``import sieve.ray``).

Errors are exceptions under :class:`sieve.Error`, one class per engine status code.
"""

from .errors import (AlreadyExists, Corruption, Error, Internal, InvalidArgument, IOError,
                     NotFound, NotSupported, ResourceExhausted, Unauthorized, Unavailable)
from ._results import Group, GroupedResult, SearchResult
from ._embedded import (Collection, Database, IngestResult, Snapshot, backup, list_backups, open,
                        restore, verify_backup)
from .client import Client, RemoteCollection, RemoteSnapshot
from ._text import analyze

__version__ = "0.1.0"

__all__ = [
    "open", "analyze", "backup", "restore", "verify_backup", "list_backups", "Database",
    "Collection", "IngestResult", "SearchResult", "GroupedResult", "Group", "Snapshot", "Client",
    "RemoteCollection", "RemoteSnapshot",
    "Error", "NotFound", "Corruption", "NotSupported", "InvalidArgument", "IOError",
    "AlreadyExists", "ResourceExhausted", "Unavailable", "Internal", "Unauthorized",
]
