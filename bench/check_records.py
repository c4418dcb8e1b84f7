#!/usr/bin/env python3
"""Checks a text-format output of `cubeswarm solve` against its input, with a cube model of
its own (54 stickers turned in space, nothing shared with cubeswarm's code):

    bench/check_records.py INPUT OUTPUT MAX_LENGTH

Every input line that is not blank or a comment must have exactly one record (one or more
lines with its id), in input order; a line that is not a move sequence must be an error; every
solution must solve its scramble within MAX_LENGTH moves. Prints a summary; exits 1 on the
first fault.
"""
import operator
import sys

FACES = {"U": (0, 1, 0), "D": (0, -1, 0), "R": (1, 0, 0), "L": (-1, 0, 0),
         "F": (0, 0, 1), "B": (0, 0, -1)}
FACES_ORDER = list(FACES.values())


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def quarter(v, axis):
    """v turned a quarter clockwise, seen from the end of `axis` (-90 degrees about it)."""
    c = cross(axis, v)
    d = dot(axis, v)
    return tuple(-c[i] + axis[i] * d for i in range(3))


def stickers():
    """Every sticker as (position, normal), in a fixed order."""
    out = []
    for n in FACES.values():
        axis = [i for i in range(3) if n[i] != 0][0]
        for a in (-1, 0, 1):
            for b in (-1, 0, 1):
                p = [a, b]
                p.insert(axis, n[axis])
                out.append((tuple(p), n))
    return sorted(out)


STICKERS = stickers()
INDEX = {s: i for i, s in enumerate(STICKERS)}


def move_getter(face, times):
    """A function taking a state (colours by sticker) to the state after the move."""
    axis = FACES[face]
    perm = list(range(len(STICKERS)))
    for i, (p, n) in enumerate(STICKERS):
        q, m = p, n
        if dot(p, axis) == 1:
            for _ in range(times):
                q, m = quarter(q, axis), quarter(m, axis)
        perm[INDEX[(q, m)]] = i
    return operator.itemgetter(*perm)


MOVES = {(f, k): move_getter(f, k) for f in FACES for k in (1, 2, 3)}
SOLVED = tuple(FACES_ORDER.index(n) for _, n in STICKERS)


def is_solved(state):
    return state == SOLVED


def parse(text):
    moves = []
    for tok in text.replace("\u2019", "'").split():
        face, rest = tok[0], tok[1:]
        if face not in FACES:
            return None
        amount = {"": 1, "2": 2, "'": 3, "2'": 2}.get(rest)
        if amount is None:
            return None
        moves.append((face, amount))
    return moves


def main():
    inp, out, max_len = sys.argv[1], sys.argv[2], int(sys.argv[3])
    expected = []
    with open(inp, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            t = line.strip()
            if t and not t.startswith("#"):
                expected.append((i, t))
    records = {}
    order = []
    with open(out, encoding="utf-8") as f:
        for line in f:
            ident, _, rest = line.rstrip("\n").partition(": ")
            ident = int(ident)
            if ident not in records:
                order.append(ident)
            elif order[-1] != ident:
                sys.exit(f"id {ident} written twice, apart")
            records.setdefault(ident, []).append(rest)
    if order != [i for i, _ in expected]:
        missing = sorted(set(i for i, _ in expected) - set(order))
        extra = sorted(set(order) - set(i for i, _ in expected))
        sys.exit(f"ids differ: {len(order)} records for {len(expected)} lines; "
                 f"missing {missing[:5]}, extra {extra[:5]}")
    solutions = errors = 0
    for i, text in expected:
        scramble = parse(text)
        for rec in records[i]:
            if rec.startswith("error: "):
                if scramble is not None:
                    sys.exit(f"line {i}: {text!r} is a scramble, its record an error: {rec}")
                errors += 1
                continue
            if scramble is None:
                sys.exit(f"line {i}: {text!r} is not a scramble, yet solved: {rec}")
            sol = rec.split(" (")[0]
            sol = "" if sol.startswith("(solved") else sol
            moves = parse(sol)
            if moves is None or len(moves) > max_len:
                sys.exit(f"line {i}: bad solution {rec!r}")
            state = SOLVED
            for m in scramble + moves:
                state = MOVES[m](state)
            if not is_solved(state):
                sys.exit(f"line {i}: {sol!r} does not solve {text!r}")
            solutions += 1
    print(f"checked: {len(expected)} lines, one record each, in order; "
          f"{solutions} solutions solve their scrambles; {errors} error records for bad lines")


if __name__ == "__main__":
    main()
