"""Textbook approximate MVA for queue and delay stations, written independently of
mva.approximate (plain Python loops, no shared code): the Bard-Schweitzer core and
Linearizer as in Chandy & Neuse (CACM 1982) and Lazowska et al., Quantitative System
Performance (1984), sec. 6.4.2 and ch. 9."""
from __future__ import annotations


def _core(D, delay, Z, N, Q, F, tol=1e-12, max_iter=200_000):
    """Bard-Schweitzer core at population N; F[k][i][c] Linearizer fraction shifts."""
    M, C = len(D), len(N)
    X = [0.0] * C
    for _ in range(max_iter):
        R = [[0.0] * C for _ in range(M)]
        for c in range(C):
            if N[c] == 0:
                continue
            for k in range(M):
                if delay[k]:
                    R[k][c] = D[k][c]
                    continue
                seen = 0.0
                for i in range(C):
                    n_i = N[i] - (1 if i == c else 0)
                    if n_i > 0:
                        seen += n_i * (Q[k][i] / N[i] + F[k][i][c])
                R[k][c] = D[k][c] * (1.0 + seen)
        X = [N[c] / (Z[c] + sum(R[k][c] for k in range(M))) if N[c] else 0.0 for c in range(C)]
        newQ = [[X[c] * R[k][c] for c in range(C)] for k in range(M)]
        diff = max(abs(newQ[k][c] - Q[k][c]) for k in range(M) for c in range(C))
        Q = newQ
        if diff < tol:
            break
    return X, Q


def _zero_f(M, C):
    return [[[0.0] * C for _ in range(C)] for _ in range(M)]


def _start(D, N):
    M, C = len(D), len(N)
    return [[N[c] / M for c in range(C)] for _ in range(M)]


def schweitzer(D, delay, Z, N):
    """Throughputs and queue lengths by Bard-Schweitzer (D[k][c], delay[k], Z[c], N[c])."""
    return _core(D, delay, Z, N, _start(D, N), _zero_f(len(D), len(N)))


def linearizer(D, delay, Z, N, outer=60):
    """Linearizer with `outer` iterations of the correction terms."""
    M, C = len(D), len(N)
    F = _zero_f(M, C)
    Q = _start(D, N)
    sub_q = {}
    for _ in range(outer):
        X, Q = _core(D, delay, Z, N, Q, F)
        for j in range(C):
            if N[j] == 0:
                continue
            Nj = list(N)
            Nj[j] -= 1
            _, sub_q[j] = _core(D, delay, Z, Nj, sub_q.get(j, _start(D, Nj)), F)
        for k in range(M):
            for i in range(C):
                for j in range(C):
                    Nj_i = N[i] - (1 if i == j else 0)
                    F[k][i][j] = (sub_q[j][k][i] / Nj_i - Q[k][i] / N[i]) if N[j] and Nj_i > 0 else 0.0
    return _core(D, delay, Z, N, Q, F)
