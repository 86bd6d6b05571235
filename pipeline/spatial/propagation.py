"""Arc consistency, backtracking search and R2's path closure over bitset domains, and what a
solution's one-variable moves show, compiled (the checker's inner loops, pipeline.spatial.checker;
docs/semantics.md sections 9 and 22).

A domain is a row of 64-bit words: value v is bit v % 64 of word v // 64. A relation is an array
(values, words) whose row v holds the values related to v, and is read as its `tables`: for each
four values 4c .. 4c+3 and each of the 16 subsets of them, the union of their rows, so that the
image of a domain costs one lookup per four values rather than one per value. A network's
constraints are read per variable: the links of variable a (`start[a]` to `start[a + 1]`) each name a variable b it
constrains (`to`) and the relation seen from a (`relations`). One constraint more, a query's,
between q0 and qn (`forward` seen from q0, `backward` from qn) replaces any link between the two;
q0 = -1 when there is none.

Compiled because the hard family's questions (section 22) spent most of a build in these loops.
Arc consistency and the closure are fixpoints, the same whatever the order of revision, and the search branches
as the checker always has (the smallest domain of more than one value, the first such variable
on a tie; its values from the least), so every answer, witness and count of branch decisions is
what the checker's Python loops gave.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_ZERO, _ONE, _NIBBLE, _FOUR = np.uint64(0), np.uint64(1), np.uint64(0xF), np.uint64(4)
_SIXTEEN_BITS, _SIXTEEN = np.uint64(0xFFFF), np.uint64(16)
_M1, _M2, _M4 = np.uint64(0x5555555555555555), np.uint64(0x3333333333333333), np.uint64(0x0F0F0F0F0F0F0F0F)
_H01, _TOP = np.uint64(0x0101010101010101), np.uint64(56)
# The arguments every network is passed as: domains, start, to, relations (as `tables`), q0, qn, forward, backward.
_NETWORK = ("uint64[:, ::1], int64[::1], int64[::1], uint64[:, :, :, ::1], int64, int64, uint64[:, :, ::1], "
            "uint64[:, :, ::1]")


@njit("void(uint64[:, ::1], uint64[:, :, ::1])", cache=True)
def _fill_tables(relation: np.ndarray, tables: np.ndarray) -> None:
    """tables[c, s]: the union of the rows of the values 4c + t for the bits t of s."""
    size, width = relation.shape
    for c in range(tables.shape[0]):
        tables[c, 0] = _ZERO
        for subset in range(1, 16):
            low = subset & -subset
            value = 4 * c + (0 if low == 1 else 1 if low == 2 else 2 if low == 4 else 3)
            for w in range(width):
                tables[c, subset, w] = tables[c, subset ^ low, w] | (relation[value, w] if value < size else _ZERO)


def tables(relation: np.ndarray) -> np.ndarray:
    """A relation's `tables` (module docstring), from its rows."""
    made = np.empty((-(-relation.shape[0] // 4), 16, relation.shape[1]), dtype=np.uint64)
    _fill_tables(relation, made)
    return made


@njit("boolean(uint64[::1], uint64[::1], boolean)", cache=True)
def _shows(image: np.ndarray, target: np.ndarray, meeting: bool) -> bool:
    """Whether `image` meets `target` (`meeting`), else whether it covers it (an empty target: covered, never met)."""
    for w in range(image.shape[0]):
        if (image[w] & target[w] != _ZERO) if meeting else (target[w] & ~image[w] != _ZERO):
            return meeting
    return not meeting


@njit("boolean(uint64[:, :, ::1], uint64[::1], uint64[::1], boolean, uint64[::1])", cache=True)
def _image(tables: np.ndarray, values: np.ndarray, target: np.ndarray, meeting: bool, out: np.ndarray) -> bool:
    """out = the values related to at least one of `values` (a relation's `tables`), or only as much
    of them as shows what is asked of `target`: whether they meet it (`meeting`) or cover it; True
    when they do. Met with a target they cover, any part of the image is the whole: most revisions of a
    domain narrow nothing, and stop as soon as each of its values is shown a partner."""
    width = values.shape[0]
    out[:] = _ZERO
    for k in range(width):
        bits = values[k]
        c = 16 * k
        while bits != _ZERO:
            while bits & _SIXTEEN_BITS == _ZERO:  # a sparse domain (one value, in a search) skips four lookups at once
                bits >>= _SIXTEEN
                c += 4
            subset = int(bits & _NIBBLE)
            if subset:
                row = tables[c, subset]
                for w in range(width):
                    out[w] |= row[w]
                if _shows(out, target, meeting):
                    return True
            bits >>= _FOUR
            c += 1
    return _shows(out, target, meeting)


@njit("int64(uint64[:, ::1], int64, uint64[::1])", cache=True)
def _narrowed(domains: np.ndarray, b: int, image: np.ndarray) -> int:
    """domains[b] met with `image`: -1 when nothing is left, 1 when it narrowed, 0 when not."""
    width = image.shape[0]
    changed, left = False, False
    for w in range(width):
        kept = domains[b, w] & image[w]
        if kept != _ZERO:
            left = True
        if kept != domains[b, w]:
            changed = True
    if not left:
        return -1
    if not changed:
        return 0
    for w in range(width):
        domains[b, w] &= image[w]
    return 1


@njit(f"boolean({_NETWORK}, int64[::1])", cache=True)
def propagate(domains: np.ndarray, start: np.ndarray, to: np.ndarray, relations: np.ndarray, q0: int, qn: int,
              forward: np.ndarray, backward: np.ndarray, changed: np.ndarray) -> bool:
    """Make the domains arc consistent in place, from the variables whose domains `changed` (or
    whose constraints are new); False on a wipe-out."""
    n, width = domains.shape
    stack = np.empty(n, np.int64)
    waiting = np.zeros(n, np.bool_)
    top = 0
    for a in changed:
        if not waiting[a]:
            waiting[a] = True
            stack[top] = a
            top += 1
    image = np.empty(width, np.uint64)
    while top > 0:
        top -= 1
        a = stack[top]
        waiting[a] = False
        for e in range(start[a], start[a + 1] + (1 if a == q0 or a == qn else 0)):
            if e == start[a + 1]:  # the query's constraint, after a's own links
                b, relation = (qn, forward) if a == q0 else (q0, backward)
            else:
                b, relation = to[e], relations[e]
                if (a == q0 and b == qn) or (a == qn and b == q0):
                    continue
            if _image(relation, domains[a], domains[b], False, image):
                continue  # every value of b has a partner in a's domain
            narrowed = _narrowed(domains, b, image)
            if narrowed < 0:
                return False
            if narrowed > 0 and not waiting[b]:
                waiting[b] = True
                stack[top] = b
                top += 1
    return True


@njit("int64(uint64[:, ::1], int64[::1], int64[::1], uint64[:, :, :, ::1], int64, int64, uint64[:, :, :, ::1], "
      "uint64[:, :, :, ::1])", cache=True)
def query_survivors(domains: np.ndarray, start: np.ndarray, to: np.ndarray, relations: np.ndarray, q0: int, qn: int,
                    forwards: np.ndarray, backwards: np.ndarray) -> int:
    """The queries k (a bitset) whose constraint between q0 and qn (`forwards[k]` seen from q0,
    `backwards[k]` from qn, as `tables`) leaves these arc consistent domains without a wipe-out,
    each propagated from them alone."""
    trial = np.empty_like(domains)
    changed = np.array([q0, qn], np.int64)
    found = 0
    for k in range(forwards.shape[0]):
        trial[:] = domains
        if propagate(trial, start, to, relations, q0, qn, forwards[k], backwards[k], changed):
            found |= 1 << k
    return found


@njit("int64(uint64[::1])", cache=True)
def _count(values: np.ndarray) -> int:
    total = 0
    for w in range(values.shape[0]):
        x = values[w]
        x = x - ((x >> _ONE) & _M1)
        x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
        x = (x + (x >> np.uint64(4))) & _M4
        total += int((x * _H01) >> _TOP)
    return total


@njit("int64(uint64[:, ::1], boolean[::1])", cache=True)
def _branching(domains: np.ndarray, linked: np.ndarray) -> int:
    """The variable to branch on: the first of the smallest domains of more than one value among
    the constrained variables; -1 when there is none (a solution)."""
    best, best_size = -1, 0
    for v in range(domains.shape[0]):
        if linked[v]:
            size = _count(domains[v])
            if size > 1 and (best < 0 or size < best_size):
                best, best_size = v, size
    return best


@njit(f"Tuple((boolean, int64))({_NETWORK})", cache=True)
def search(domains: np.ndarray, start: np.ndarray, to: np.ndarray, relations: np.ndarray, q0: int, qn: int,
           forward: np.ndarray, backward: np.ndarray) -> tuple[bool, int]:
    """A solution below these arc consistent domains, written into them when there is one (a
    variable without constraints keeps its domain: any of its values will do); whether there is,
    and the values tried (the branch decisions)."""
    n, width = domains.shape
    linked = np.zeros(n, np.bool_)
    for v in range(n):
        linked[v] = start[v + 1] > start[v] or (q0 >= 0 and (v == q0 or v == qn))
    levels = np.empty((n + 1, n, width), np.uint64)  # each level fixes one more variable: at most n
    branched = np.empty(n + 1, np.int64)
    rest = np.empty((n + 1, width), np.uint64)  # the values of the branched variable not tried yet
    changed = np.empty(1, np.int64)
    levels[0] = domains
    var = _branching(domains, linked)
    if var < 0:
        return True, 0
    depth, tried = 0, 0
    branched[0] = var
    rest[0] = domains[var]
    while depth >= 0:
        k = 0
        while k < width and rest[depth, k] == _ZERO:
            k += 1
        if k == width:
            depth -= 1
            continue
        word = rest[depth, k]
        value = word & (~word + _ONE)
        rest[depth, k] = word ^ value
        tried += 1
        trial = levels[depth + 1]
        trial[:] = levels[depth]
        var = branched[depth]
        trial[var] = _ZERO
        trial[var, k] = value
        changed[0] = var
        if propagate(trial, start, to, relations, q0, qn, forward, backward, changed):
            var = _branching(trial, linked)
            if var < 0:
                domains[:] = trial
                return True, tried
            depth += 1
            branched[depth] = var
            rest[depth] = trial[var]
    return False, tried


@njit("int64[::1](uint64[:, ::1])", cache=True)
def highest(domains: np.ndarray) -> np.ndarray:
    """Each domain's greatest value (a solution's value, where it has one)."""
    n, width = domains.shape
    out = np.full(n, -1, np.int64)
    for v in range(n):
        for w in range(width - 1, -1, -1):
            word = domains[v, w]
            if word != _ZERO:
                bit = 63
                while word >> np.uint64(bit) == _ZERO:
                    bit -= 1
                out[v] = 64 * w + bit
                break
    return out


@njit("uint64[:, ::1](int64, uint64[:, :, ::1])", cache=True)
def joined(atoms: int, atom_cells: np.ndarray) -> np.ndarray:
    """The union of the relations of the atoms in `atoms` (a bitset), each atom's cell pairs given as rows of words."""
    out = np.zeros(atom_cells.shape[1:], np.uint64)
    for x in range(atom_cells.shape[0]):
        if atoms >> x & 1:
            out |= atom_cells[x]
    return out


@njit("void(uint64[:, ::1], int64[::1], int64[::1], uint64[:, :, :, ::1], int64[::1], uint64[:, ::1])", cache=True)
def moves(domains: np.ndarray, start: np.ndarray, to: np.ndarray, relations: np.ndarray, values: np.ndarray,
          out: np.ndarray) -> None:
    """out[v]: the values of v's domain its links allow, every other variable at its value in
    `values` (a solution's one-variable moves, each a solution too)."""
    out[:] = domains
    for c in range(values.shape[0]):
        value = values[c]
        for link in range(start[c], start[c + 1]):
            row = relations[link, value >> 2, 1 << (value & 3)]
            for w in range(out.shape[1]):
                out[to[link], w] &= row[w]


@njit("int64(uint64[:, ::1], int64[::1], int64, int64, boolean, uint64[:, :, :, ::1], int64[::1])", cache=True)
def shown(moves: np.ndarray, values: np.ndarray, a: int, b: int, bound: bool, codes: np.ndarray,
          converses: np.ndarray) -> int:
    """The codes k (a bitset over `codes`, each a relation's `tables`; `converses[k]` its converse's
    index) such that a solution (`values`) or one of its moves (`moves`) has a in relation k to b.
    Where a fact binds a and b (`bound`), one of the two moves while the other stays; where none
    does, both may move at once, each keeping its own facts."""
    width = moves.shape[1]
    image = np.empty(width, np.uint64)
    found = 0
    for k in range(codes.shape[0]):
        hit = False
        if bound:
            seen_from_b = codes[converses[k], values[b] >> 2, 1 << (values[b] & 3)]
            seen_from_a = codes[k, values[a] >> 2, 1 << (values[a] & 3)]
            for w in range(width):
                if moves[a, w] & seen_from_b[w] != _ZERO or moves[b, w] & seen_from_a[w] != _ZERO:
                    hit = True
        else:
            hit = _image(codes[k], moves[a], moves[b], True, image)
        if hit:
            found |= 1 << k
    return found


# Path consistency over atoms (docs/semantics.md section 22): a pair's atoms, as a bitset of at
# most 64 (an atom is one direction with one distance class on each scale), are kept per pair
# (a, b), a < b, in closed[a, b]; the pair the other way round holds their converses.


@njit("int64(int64, int64[::1])", cache=True)
def _converse(atoms: int, converses: np.ndarray) -> int:
    out = 0
    for x in range(converses.shape[0]):
        if atoms >> x & 1:
            out |= 1 << converses[x]
    return out


@njit("int64(int64[:, ::1], int64, int64, int64[::1])", cache=True)
def _atoms_of(closed: np.ndarray, a: int, b: int, converses: np.ndarray) -> int:
    return closed[a, b] if a < b else _converse(closed[b, a], converses)


@njit("int64(int64, int64, int64[:, ::1])", cache=True)
def _composed(first: int, second: int, compose: np.ndarray) -> int:
    """The atoms of (a, c) where one of `first` holds of (a, b) and one of `second` of (b, c)."""
    out = 0
    for x in range(compose.shape[0]):
        if first >> x & 1:
            for y in range(compose.shape[0]):
                if second >> y & 1:
                    out |= compose[x, y]
    return out


@njit("int64(uint64[::1], uint64[::1], uint64[:, :, ::1], int64)", cache=True)
def _realised(first: np.ndarray, second: np.ndarray, atom_cells: np.ndarray, sought: int) -> int:
    """The atoms among `sought` that some value of `first` takes to some value of `second`."""
    width, found = first.shape[0], 0
    for k in range(width):
        bits = first[k]
        for t in range(64):
            if bits >> np.uint64(t) & _ONE:
                v = 64 * k + t
                for x in range(atom_cells.shape[0]):
                    if sought >> x & 1 and not found >> x & 1:
                        for w in range(width):
                            if atom_cells[x, v, w] & second[w]:
                                found |= 1 << x
                                break
                if found == sought:
                    return found
    return found


@njit("boolean(int64[:, ::1], int64, int64, int64, int64[:, ::1], boolean[:, ::1], int64[::1])", cache=True)
def _narrow_pair(closed: np.ndarray, p: int, q: int, held: int, queue: np.ndarray, waiting: np.ndarray,
                 top: np.ndarray) -> bool:
    """closed[p, q] (p < q) met with `held`; a pair it narrows is queued, once. False when nothing is left."""
    kept = closed[p, q] & held
    if kept != closed[p, q]:
        if kept == 0:
            return False
        closed[p, q] = kept
        if not waiting[p, q]:
            waiting[p, q] = True
            queue[top[0], 0], queue[top[0], 1] = p, q
            top[0] += 1
    return True


@njit("void(int64[:, ::1], int64[:, ::1], int64[::1], uint64[:, :, ::1], int64[::1], int64[::1], uint64[:, :, :, ::1])",
      cache=True)
def _atom_links(closed: np.ndarray, built: np.ndarray, converses: np.ndarray, atom_cells: np.ndarray, start: np.ndarray,
                to: np.ndarray, relations: np.ndarray) -> None:
    """Every pair's atoms as a constraint on cells, laid out as a network's links (`start`, `to`,
    `relations`: a's links are to every other variable in order); a relation is made again only where
    its pair's atoms changed since it was made (`built`)."""
    n = closed.shape[0]
    size, width = atom_cells.shape[1], atom_cells.shape[2]
    relation = np.empty((size, width), np.uint64)
    for a in range(n + 1):
        start[a] = a * (n - 1)
    e = 0
    for a in range(n):
        for b in range(n):
            if a != b:
                to[e] = b
                atoms = _atoms_of(closed, a, b, converses)
                if atoms != built[a, b]:
                    built[a, b] = atoms
                    relation[:] = _ZERO
                    for x in range(atom_cells.shape[0]):
                        if atoms >> x & 1:
                            for v in range(size):
                                for w in range(width):
                                    relation[v, w] |= atom_cells[x, v, w]
                    _fill_tables(relation, relations[e])
                e += 1


@njit("boolean(uint64[:, ::1], int64[:, ::1], int64[:, ::1], int64[:, ::1], int64[::1], uint64[:, :, ::1], int64[::1], "
      "int64[::1], uint64[:, :, :, ::1])", cache=True)
def path_closure(domains: np.ndarray, stated: np.ndarray, closed: np.ndarray, compose: np.ndarray,
                 converses: np.ndarray, atom_cells: np.ndarray, start: np.ndarray, to: np.ndarray,
                 relations: np.ndarray) -> bool:
    """Every pair's atoms (`closed`, from all atoms; `stated`: those its facts allow) and the
    domains, narrowed in place to the common fixpoint of arc consistency over cells and path
    consistency over atoms (a pair keeps the atoms some cells of its two domains take, each
    triple's composition narrows them, and a pair's atoms as a constraint on cells narrow the
    domains); False on a wipe-out. A fixpoint of narrowing operators: the same in any order.
    The closed network's links are left in `start`, `to` and `relations` (`_atom_links`)."""
    n = domains.shape[0]
    pairs = n * (n - 1) // 2
    queue = np.empty((pairs, 2), np.int64)
    waiting = np.zeros((n, n), np.bool_)
    top = np.zeros(1, np.int64)
    everything = np.arange(n)
    built = np.full((n, n), -1, np.int64)  # the atoms each pair's relation (`relations`) was made from
    while True:
        for a in range(n):
            for b in range(a + 1, n):
                realised = _realised(domains[a], domains[b], atom_cells, stated[a, b] & closed[a, b])
                if realised == 0:
                    return False
                if not _narrow_pair(closed, a, b, realised, queue, waiting, top):
                    return False
        if top[0] == 0:
            _atom_links(closed, built, converses, atom_cells, start, to, relations)
            return True
        while top[0] > 0:
            top[0] -= 1
            a, b = queue[top[0], 0], queue[top[0], 1]
            waiting[a, b] = False
            for c in range(n):
                if c == a or c == b:
                    continue
                # a to c through b, and b to c through a
                for p, q, through in ((a, c, _composed(closed[a, b], _atoms_of(closed, b, c, converses), compose)),
                                      (b, c, _composed(_converse(closed[a, b], converses),
                                                       _atoms_of(closed, a, c, converses), compose))):
                    if p > q:
                        p, q, through = q, p, _converse(through, converses)
                    if not _narrow_pair(closed, p, q, through, queue, waiting, top):
                        return False
        _atom_links(closed, built, converses, atom_cells, start, to, relations)
        if not propagate(domains, start, to, relations, -1, -1, relations[0], relations[0], everything):
            return False
