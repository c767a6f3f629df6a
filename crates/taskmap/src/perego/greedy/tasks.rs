//! The task graph as the greedy mapper sees it: undirected partner lists, the centre, the
//! diameter, and breadth-first balls.

use crate::perego::spm::SpmModel;

/// Undirected partner lists of the model's channels (CSR, sorted, one entry per partner).
pub(crate) struct Partners {
    pub(crate) start: Vec<u32>,
    pub(crate) adj: Vec<u32>,
}

impl Partners {
    pub(crate) fn new(model: &SpmModel) -> Self {
        let n = model.work.len();
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(2 * model.channels.len());
        for c in &model.channels {
            if c.src != c.dst {
                pairs.push((c.src, c.dst));
                pairs.push((c.dst, c.src));
            }
        }
        let (start, adj) = adjacency(n, pairs);
        Self { start, adj }
    }

    #[inline]
    pub(crate) fn of(&self, t: u32) -> &[u32] {
        &self.adj[self.start[t as usize] as usize..self.start[t as usize + 1] as usize]
    }

    #[inline]
    pub(crate) fn degree(&self, t: u32) -> u32 {
        self.start[t as usize + 1] - self.start[t as usize]
    }

    pub(crate) fn len(&self) -> usize {
        self.start.len() - 1
    }
}

/// Breadth-first search from `s`: the total hop distance to every task it reaches
/// (unreached tasks count `n` hops each) and the eccentricity; `dist` is scratch.
fn bfs(p: &Partners, s: u32, dist: &mut [u32], queue: &mut Vec<u32>) -> (u64, u32, u32) {
    let n = p.len();
    dist.iter_mut().for_each(|d| *d = u32::MAX);
    queue.clear();
    dist[s as usize] = 0;
    queue.push(s);
    let mut head = 0;
    let mut total = 0u64;
    while head < queue.len() {
        let u = queue[head];
        head += 1;
        total += u64::from(dist[u as usize]);
        for &v in p.of(u) {
            if dist[v as usize] == u32::MAX {
                dist[v as usize] = dist[u as usize] + 1;
                queue.push(v);
            }
        }
    }
    let last = *queue.last().unwrap_or(&s);
    let ecc = dist[last as usize];
    total += (n - queue.len()) as u64 * n as u64;
    (total, ecc, last)
}

/// Tasks up to which the centre is found exactly (a search from every task), provided the
/// searches take at most [`CENTRE_MAX_STEPS`] steps in all.
pub(crate) const EXACT_CENTRE_MAX_TASKS: usize = 4096;

/// Breadth-first searches the approximate centre may use (fewer when
/// [`CENTRE_MAX_STEPS`] would be passed).
pub(crate) const MAX_DESCENT_SEARCHES: u32 = 1024;

/// The most steps (tasks and partner entries visited, `T + a` per search) the centre may
/// take, exact or approximate.
pub(crate) const CENTRE_MAX_STEPS: u64 = 1 << 27;

/// The centre (smallest total hop distance to all tasks, lowest id on ties) and the
/// diameter of the task graph. Exact up to [`EXACT_CENTRE_MAX_TASKS`] tasks when
/// `T·(T + a) ≤` [`CENTRE_MAX_STEPS`] (O(T·(T + a))); otherwise the middle of a
/// double-sweep path improved by descent over neighbours (first improvement, at most
/// [`MAX_DESCENT_SEARCHES`] searches and `CENTRE_MAX_STEPS` steps, at least 4 searches),
/// and the largest eccentricity seen as the diameter.
pub(crate) fn centre_and_diameter(p: &Partners) -> (u32, u32) {
    let n = p.len();
    if n == 0 {
        return (0, 0);
    }
    let mut dist = vec![u32::MAX; n];
    let mut queue = Vec::with_capacity(n);
    let per_search = (n + p.adj.len()) as u64;
    if n <= EXACT_CENTRE_MAX_TASKS && n as u64 * per_search <= CENTRE_MAX_STEPS {
        let mut best = (u64::MAX, 0u32);
        let mut diam = 0;
        for s in 0..n as u32 {
            let (total, ecc, _) = bfs(p, s, &mut dist, &mut queue);
            diam = diam.max(ecc);
            if total < best.0 {
                best = (total, s);
            }
        }
        return (best.1, diam);
    }
    let (_, _, a) = bfs(p, 0, &mut dist, &mut queue);
    let (_, ecc_a, b) = bfs(p, a, &mut dist, &mut queue);
    let mut diam = ecc_a;
    // Walk back from b to a half-way.
    let mut cur = b;
    let target = ecc_a / 2;
    while dist[cur as usize] > target {
        let d = dist[cur as usize];
        cur = *p
            .of(cur)
            .iter()
            .find(|&&v| dist[v as usize] + 1 == d)
            .expect("a BFS predecessor");
    }
    let (mut best_total, ecc, _) = bfs(p, cur, &mut dist, &mut queue);
    diam = diam.max(ecc);
    let max_searches =
        (CENTRE_MAX_STEPS / per_search).clamp(4, u64::from(MAX_DESCENT_SEARCHES)) as u32;
    let mut searches = 3;
    'descent: while searches < max_searches {
        for &v in p.of(cur) {
            let (total, ecc, _) = bfs(p, v, &mut dist, &mut queue);
            diam = diam.max(ecc);
            searches += 1;
            if total < best_total {
                best_total = total;
                cur = v;
                continue 'descent;
            }
            if searches >= max_searches {
                break 'descent;
            }
        }
        break;
    }
    (cur, diam)
}

/// The adjacency lists of `0..n` from directed pairs `(a, b)` (duplicates dropped), as
/// `(start, ids)`: the neighbours of `a` are `ids[start[a]..start[a + 1]]`, ascending.
pub(crate) fn adjacency(n: usize, mut pairs: Vec<(u32, u32)>) -> (Vec<u32>, Vec<u32>) {
    pairs.sort_unstable();
    pairs.dedup();
    let mut start = vec![0u32; n + 1];
    for &(a, _) in &pairs {
        start[a as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    (start, pairs.into_iter().map(|(_, b)| b).collect())
}
