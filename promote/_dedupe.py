"""Near-duplicate dedupe: MinHash + LSH over trace signatures, verified by exact Jaccard.

Why: production repeats itself. Promoting every copy of the same incident
wastes reviewer time and over-weights one behaviour in the eval set, but how
often production hit it is a useful signal. So near-duplicates collapse into
clusters that keep a representative (the first trace seen) and a size.

Parameters (explicit, see ``DedupeParams``): 128 permutations split into
32 bands of 4 rows. Two signatures become LSH candidates when any band
agrees, with probability ``1 - (1 - J**4)**32`` for Jaccard ``J``: 0.87 at
J=0.5, 0.99 at J=0.6, 0.9996 at J=0.7; the curve's midpoint is about
``(1/32)**(1/4) = 0.42``. Candidates are then verified by the exact Jaccard
of their shingle sets; a trace joins the cluster of its most similar verified
candidate when ``J >= threshold`` (0.5 by default), else it founds a cluster.
A trace whose signature says nothing of the task (no tool call, an intent of fewer
than three content words: ``TraceSignature.informative``) always founds its own.
A trace never merges two existing clusters: clusters and representatives are
stable once written.

Two indexes share this logic: ``DedupeIndex`` (process memory, for one batch
or tests) and ``StoreDedupeIndex`` (persisted in the store so each batch is
checked against everything seen before).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import xxhash
from datasketch import MinHash, MinHashLSH
from flywheel.promote._redact_types import TraceStep
from flywheel.promote._signature import TraceSignature, jaccard, trace_signature

if TYPE_CHECKING:
    from flywheel import Store

_LOW32 = np.uint64(0xFFFFFFFF)


@dataclass(frozen=True)
class DedupeParams:
    """MinHash/LSH parameters and the verification threshold.

    Attributes:
        num_perm: MinHash permutations (must equal ``bands * rows``).
        bands: LSH bands ``b``.
        rows: Rows per band ``r``.
        threshold: Minimum exact Jaccard of shingle sets for a duplicate.
        seed: Permutation seed; signatures are comparable only under one seed.
    """

    num_perm: int = 128
    bands: int = 32
    rows: int = 4
    threshold: float = 0.5
    seed: int = 1

    def __post_init__(self) -> None:
        if self.bands * self.rows != self.num_perm:
            raise ValueError(
                f"bands*rows must equal num_perm: {self.bands}*{self.rows} != {self.num_perm}"
            )
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")

    @property
    def key(self) -> str:
        """Identifies comparable signatures in the store (signature version included)."""
        return f"sig1:mh{self.num_perm}:b{self.bands}r{self.rows}:s{self.seed}"

    def candidate_probability(self, j: float) -> float:
        """P(two sets with Jaccard ``j`` share at least one band) = 1-(1-j^r)^b."""
        return 1.0 - (1.0 - j**self.rows) ** self.bands


@dataclass(frozen=True)
class Assignment:
    """Where one trace landed.

    Attributes:
        trace_id: The trace.
        cluster_id: Its cluster (the representative's trace id).
        is_new_cluster: True when this trace founded the cluster.
        matched_trace_id: The verified most-similar earlier trace ("" if none).
        similarity: Exact Jaccard to ``matched_trace_id`` (1.0 when new).
    """

    trace_id: str
    cluster_id: str
    is_new_cluster: bool
    matched_trace_id: str = ""
    similarity: float = 1.0

    @property
    def representative(self) -> str:
        """The cluster's representative trace id."""
        return self.cluster_id


@dataclass
class Cluster:
    """A group of near-duplicate traces: representative, size and time span."""

    cluster_id: str
    representative: str
    size: int
    first_seen_ns: int = 0
    last_seen_ns: int = 0
    members: list[str] = field(default_factory=list)


def minhashes(hash_sets: Sequence[np.ndarray], params: DedupeParams) -> list[MinHash]:
    """MinHash each sorted uint64 shingle-hash set (vectorised via ``MinHash.bulk``).

    Shingles are hashed once with xxh3-64 (what the store keeps); the low 32
    bits feed datasketch directly (identity hash function), so the store and
    the sketches never disagree about a shingle.
    """
    return MinHash.bulk(
        [(h & _LOW32).tolist() for h in hash_sets],
        num_perm=params.num_perm,
        seed=params.seed,
        hashfunc=_identity,
    )


def _identity(v: int) -> int:
    return v


def band_keys(m: MinHash, params: DedupeParams) -> list[int]:
    """One 64-bit key per band: xxh3 of the band's hash values, seeded by band index."""
    hv = np.ascontiguousarray(m.hashvalues)
    r = params.rows
    return [
        xxhash.xxh3_64_intdigest(hv[i * r : (i + 1) * r].tobytes(), seed=i)
        for i in range(params.bands)
    ]


class DedupeIndex:
    """In-memory near-duplicate index (datasketch ``MinHashLSH``).

    Use for one batch or in tests; ``StoreDedupeIndex`` persists the same
    decisions so later batches see earlier ones.
    """

    def __init__(self, params: DedupeParams | None = None) -> None:
        self.params = params or DedupeParams()
        self.lsh = MinHashLSH(
            num_perm=self.params.num_perm, params=(self.params.bands, self.params.rows)
        )
        self._shingles: dict[str, frozenset[str]] = {}
        self._assigned: dict[str, Assignment] = {}
        self.clusters: dict[str, Cluster] = {}

    def __len__(self) -> int:
        return len(self._assigned)

    def add_trace(self, trace_id: str, steps: Sequence[TraceStep]) -> Assignment:
        """Signature, then ``add``."""
        return self.add(trace_id, trace_signature(steps))

    def add(
        self, trace_id: str, signature: TraceSignature, mh: MinHash | None = None
    ) -> Assignment:
        """Assign one trace to a cluster; re-adding a known trace returns its assignment."""
        if trace_id in self._assigned:
            return self._assigned[trace_id]
        if mh is None:
            mh = minhashes([signature.hashes()], self.params)[0]
        best_id, best_j = "", -1.0
        for cand in self.lsh.query(mh):
            j = jaccard(signature.shingles, self._shingles[cand])
            if j > best_j or (j == best_j and cand < best_id):
                best_id, best_j = cand, j
        now = time.time_ns()
        if best_j >= self.params.threshold and signature.informative:
            cluster_id = self._assigned[best_id].cluster_id
            a = Assignment(trace_id, cluster_id, False, best_id, best_j)
            c = self.clusters[cluster_id]
            c.size += 1
            c.last_seen_ns = now
            c.members.append(trace_id)
        else:
            a = Assignment(trace_id, trace_id, True)
            self.clusters[trace_id] = Cluster(trace_id, trace_id, 1, now, now, [trace_id])
        self.lsh.insert(trace_id, mh)
        self._shingles[trace_id] = signature.shingles
        self._assigned[trace_id] = a
        return a

    def add_many(self, items: Sequence[tuple[str, TraceSignature]]) -> list[Assignment]:
        """Add traces in order (MinHashes computed in one vectorised pass)."""
        mhs = minhashes([sig.hashes() for _, sig in items], self.params)
        return [self.add(tid, sig, mh) for (tid, sig), mh in zip(items, mhs, strict=True)]


# -- store-backed ---------------------------------------------------------

#: Band keys per bound-parameter array (keeps a server request well under 1 MiB).
_KEYS_PER_QUERY = 20_000
#: Stored matches read per band key; bounds the work for very large clusters.
_MATCHES_PER_KEY = 8
#: Stored candidates verified per new trace, most shared bands first.
_VERIFY_PER_TRACE = 24


class StoreDedupeIndex:
    """Near-duplicate index whose signatures live in the store.

    Tables (``promote/migrations/020_dedupe.sql``): ``dedupe_signatures``
    (one row per trace: cluster, shingle hashes, MinHash values),
    ``dedupe_bands`` (one row per trace and band: the band key, for candidate
    lookup) and ``dedupe_clusters`` (representative and size, latest version
    wins). A new batch is matched against the store by band keys (bound
    parameters, ``LIMIT n BY band_key`` so a huge cluster stays cheap), within
    itself by an in-memory ``MinHashLSH``, and every candidate is verified by
    exact Jaccard before the batch is written.

    Each project has its own index: the stored ``params`` column holds the
    parameter key and the project, so one project's traces never join (or
    reveal) another project's clusters, and equal trace ids never collide.

    Not safe for two writers deduplicating at the same time (each would miss
    the other's unwritten batch); run one dedupe job per store.
    """

    def __init__(
        self, store: Store, params: DedupeParams | None = None, *, project: str = "default"
    ) -> None:
        self.store = store
        self.params = params or DedupeParams()
        self.project = project
        #: The value of the ``params`` column: rows under another namespace are never compared.
        self.namespace = f"{self.params.key}|project={project}"

    # -- writes --
    def add_traces(self, items: Sequence[tuple[str, Sequence[TraceStep]]]) -> list[Assignment]:
        """Signatures, then ``add_batch``."""
        return self.add_batch([(tid, trace_signature(steps)) for tid, steps in items])

    def add_batch(self, items: Sequence[tuple[str, TraceSignature]]) -> list[Assignment]:
        """Assign each trace to a cluster, checking the store and the batch; persist.

        Args:
            items: ``(trace_id, signature)`` in arrival order. A trace id
                already in the store (or twice in the batch) is not re-added;
                its existing assignment is returned.

        Returns:
            One ``Assignment`` per item, same order.
        """
        p = self.params
        known = self._known([tid for tid, _ in items])
        fresh: list[tuple[str, TraceSignature]] = []
        seen: set[str] = set()
        for tid, sig in items:
            if tid not in known and tid not in seen:
                seen.add(tid)
                fresh.append((tid, sig))
        hashes = [sig.hashes() for _, sig in fresh]
        mhs = minhashes(hashes, p)
        keys = [band_keys(m, p) for m in mhs]
        stored = self._stored_candidates(keys)
        # Within the batch: the same band keys as the store, in a dict (one
        # banding scheme for both; MinHashLSH's per-band byteswaps cost more
        # than the rest of the batch).
        batch_bands: dict[int, list[str]] = {}
        # trace -> (shingle-hash set, cluster) for this batch; sets of ints make the
        # exact Jaccard a C-level intersection (numpy's intersect1d was 20x slower here).
        by_id: dict[str, tuple[frozenset[int], str]] = {}
        new_sizes: Counter[str] = Counter()
        reps: dict[str, str] = {}
        now = time.time_ns()
        out_new: dict[str, Assignment] = {}
        for (tid, sig), h, ks, cands in zip(fresh, hashes, keys, stored, strict=True):
            hs = frozenset(h.tolist())
            best_id, best_j, best_cluster = "", -1.0, ""
            for cid, (ch, ccl) in cands.items():
                j = jaccard(hs, ch)
                if j > best_j or (j == best_j and cid < best_id):
                    best_id, best_j, best_cluster = cid, j, ccl
            in_batch: set[str] = set()
            for k in ks:
                in_batch.update(batch_bands.get(k, ()))
            for cid in in_batch:
                ch, ccl = by_id[cid]
                j = jaccard(hs, ch)
                if j > best_j or (j == best_j and cid < best_id):
                    best_id, best_j, best_cluster = cid, j, ccl
            if best_j >= p.threshold and sig.informative:
                a = Assignment(tid, best_cluster, False, best_id, best_j)
            else:
                a = Assignment(tid, tid, True)
                reps[tid] = tid
            new_sizes[a.cluster_id] += 1
            for k in ks:
                members = batch_bands.setdefault(k, [])
                if len(members) < _MATCHES_PER_KEY:  # as in the store: bounded per key
                    members.append(tid)
            by_id[tid] = (hs, a.cluster_id)
            out_new[tid] = a
        if fresh:
            self._write(fresh, hashes, mhs, keys, out_new, new_sizes, reps, now)
        result = []
        for tid, _ in items:
            result.append(out_new.get(tid) or known[tid])
        return result

    def _known(self, trace_ids: Sequence[str]) -> dict[str, Assignment]:
        if not trace_ids:
            return {}
        rows = self.store.query(
            "SELECT trace_id, argMax(cluster_id, created_at) AS cl, "
            "argMax(matched_trace_id, created_at) AS matched, "
            "argMax(similarity, created_at) AS sim "
            "FROM dedupe_signatures WHERE params = {p:String} AND trace_id IN {ids:Array(String)} "
            "GROUP BY trace_id",
            {"p": self.namespace, "ids": list(dict.fromkeys(trace_ids))},
        )
        return {
            r["trace_id"]: Assignment(
                r["trace_id"], r["cl"], r["cl"] == r["trace_id"], r["matched"], float(r["sim"])
            )
            for r in rows
        }

    def _stored_candidates(
        self, keys: list[list[int]]
    ) -> list[dict[str, tuple[frozenset[int], str]]]:
        """For each new trace: stored traces sharing a band, with hashes and cluster."""
        all_keys = sorted({k for ks in keys for k in ks})
        hits: dict[int, list[str]] = {}
        for i in range(0, len(all_keys), _KEYS_PER_QUERY):
            rows = self.store.query(
                "SELECT band_key, trace_id FROM dedupe_bands "
                "WHERE params = {p:String} AND band_key IN {keys:Array(UInt64)} "
                f"LIMIT {_MATCHES_PER_KEY} BY band_key",
                {"p": self.namespace, "keys": all_keys[i : i + _KEYS_PER_QUERY]},
            )
            for r in rows:
                hits.setdefault(int(r["band_key"]), []).append(r["trace_id"])
        per_trace: list[list[str]] = []
        wanted: set[str] = set()
        for ks in keys:
            shared: dict[str, int] = {}
            for k in ks:
                for tid in hits.get(k, ()):
                    shared[tid] = shared.get(tid, 0) + 1
            if len(shared) > _VERIFY_PER_TRACE:
                top = sorted(shared, key=lambda t: (-shared[t], t))[:_VERIFY_PER_TRACE]
            else:
                top = list(shared)
            per_trace.append(top)
            wanted.update(top)
        info: dict[str, tuple[frozenset[int], str]] = {}
        ids = sorted(wanted)
        for i in range(0, len(ids), 5_000):
            rows = self.store.query(
                "SELECT trace_id, argMax(cluster_id, created_at) AS cl, "
                "argMax(shingles, created_at) AS sh FROM dedupe_signatures "
                "WHERE params = {p:String} AND trace_id IN {ids:Array(String)} GROUP BY trace_id",
                {"p": self.namespace, "ids": ids[i : i + 5_000]},
            )
            for r in rows:
                info[r["trace_id"]] = (frozenset(int(x) for x in r["sh"]), r["cl"])
        return [{t: info[t] for t in top if t in info} for top in per_trace]

    def _write(
        self,
        fresh: list[tuple[str, TraceSignature]],
        hashes: list[np.ndarray],
        mhs: list[MinHash],
        keys: list[list[int]],
        assigned: dict[str, Assignment],
        new_sizes: Counter[str],
        reps: dict[str, str],
        now: int,
    ) -> None:
        store = self.store
        pk = self.namespace
        ids = [tid for tid, _ in fresh]
        # Sizes first read (existing clusters), then written with a newer version.
        old = self._cluster_rows([c for c in new_sizes if c not in reps])
        store.insert(
            "dedupe_signatures",
            {
                "trace_id": ids,
                "params": [pk] * len(ids),
                "cluster_id": [assigned[t].cluster_id for t in ids],
                "matched_trace_id": [assigned[t].matched_trace_id for t in ids],
                "similarity": [assigned[t].similarity for t in ids],
                "tools": [list(sig.tools) for _, sig in fresh],
                "shingles": [h.tolist() for h in hashes],
                "minhash": [m.hashvalues.tolist() for m in mhs],
                "created_at": [now] * len(ids),
            },
        )
        store.insert(
            "dedupe_bands",
            {
                "params": [pk] * (len(ids) * self.params.bands),
                "band_key": [k for ks in keys for k in ks],
                "trace_id": [t for t in ids for _ in range(self.params.bands)],
            },
        )
        cids = sorted(new_sizes)
        store.insert(
            "dedupe_clusters",
            {
                "cluster_id": cids,
                "params": [pk] * len(cids),
                "representative": [old[c].representative if c in old else reps[c] for c in cids],
                "size": [(old[c].size if c in old else 0) + new_sizes[c] for c in cids],
                "first_seen": [old[c].first_seen_ns if c in old else now for c in cids],
                "last_seen": [now] * len(cids),
                "version": [now] * len(cids),
            },
        )

    # -- reads --
    def _cluster_rows(self, cluster_ids: Sequence[str]) -> dict[str, Cluster]:
        out: dict[str, Cluster] = {}
        ids = list(cluster_ids)
        for i in range(0, len(ids), 5_000):
            for c in self._clusters_where(
                "cluster_id IN {ids:Array(String)}", {"ids": ids[i : i + 5_000]}, limit=None
            ):
                out[c.cluster_id] = c
        return out

    def _clusters_where(
        self, cond: str, params: dict[str, object], limit: int | None, min_size: int = 1
    ) -> list[Cluster]:
        sql = (
            "SELECT cluster_id, argMax(representative, version) AS rep, "
            "argMax(size, version) AS n, argMax(first_seen, version) AS first, "
            "max(last_seen) AS last FROM dedupe_clusters "
            f"WHERE params = {{p:String}} AND {cond} GROUP BY cluster_id "
            "HAVING n >= {min_size:UInt64} ORDER BY n DESC, cluster_id"
        )
        if limit is not None:
            sql += " LIMIT {lim:UInt64}"
            params = {**params, "lim": limit}
        rows = self.store.query(sql, {"p": self.namespace, "min_size": min_size, **params})
        return [
            Cluster(r["cluster_id"], r["rep"], int(r["n"]), int(r["first"]), int(r["last"]))
            for r in rows
        ]

    def clusters(self, min_size: int = 1, limit: int | None = 1000) -> list[Cluster]:
        """Clusters, largest first (size = how many traces production sent into it)."""
        return self._clusters_where("1 = 1", {}, limit=limit, min_size=min_size)

    def clusters_by_id(self, cluster_ids: Sequence[str]) -> dict[str, Cluster]:
        """Current representative and size of the given clusters (missing ids are absent)."""
        return self._cluster_rows(cluster_ids)

    def cluster_of(self, trace_ids: Sequence[str]) -> dict[str, Assignment]:
        """Stored assignments of the given traces (missing ids are absent)."""
        return self._known(trace_ids)

    def members(self, cluster_id: str) -> list[str]:
        """Trace ids in one cluster, in arrival order."""
        rows = self.store.query(
            "SELECT trace_id FROM dedupe_signatures FINAL WHERE params = {p:String} "
            "AND cluster_id = {c:String} ORDER BY created_at, trace_id",
            {"p": self.namespace, "c": cluster_id},
        )
        return [r["trace_id"] for r in rows]
