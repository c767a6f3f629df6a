//! Island removal: pieces of a side cut off from the rest of it, moved to the other side.

use crate::multilevel::bipart::*;

/// Moves every island to the other side: a connected piece of a side (within the set's
/// internal edges) other than the side's largest, that has an edge to the other side and
/// no fixed task (a piece without such an edge is a component of the set on its own,
/// which FM places). Returns whether any task moved. O(n + m).
pub(crate) fn move_islands(sp: &SubProblem, side: &mut [u8]) -> bool {
    let n = sp.n();
    let mut comp = vec![u32::MAX; n];
    // (size, movable: touches the other side and holds no fixed task, side) per piece.
    let mut info: Vec<(usize, bool, u8)> = Vec::new();
    let mut stack = Vec::new();
    for s0 in 0..n {
        if comp[s0] != u32::MAX {
            continue;
        }
        let id = info.len() as u32;
        comp[s0] = id;
        stack.push(s0);
        let (mut size, mut fixed, mut touches) = (0usize, false, false);
        while let Some(u) = stack.pop() {
            size += 1;
            fixed |= sp.fixed_side(u).is_some();
            for e in sp.xadj[u]..sp.xadj[u + 1] {
                let v = sp.adjncy[e] as usize;
                if side[v] != side[u] {
                    touches = true;
                } else if comp[v] == u32::MAX {
                    comp[v] = id;
                    stack.push(v);
                }
            }
        }
        info.push((size, touches && !fixed, side[s0]));
    }
    let mut largest = [u32::MAX; 2];
    for (i, &(size, _, s)) in info.iter().enumerate() {
        let l = &mut largest[s as usize];
        if *l == u32::MAX || size > info[*l as usize].0 {
            *l = i as u32;
        }
    }
    let mut moved = false;
    for v in 0..n {
        let c = comp[v];
        let (_, movable, s) = info[c as usize];
        if c != largest[s as usize] && movable {
            side[v] = 1 - s;
            moved = true;
        }
    }
    moved
}
