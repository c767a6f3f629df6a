//! Link congestion of a mapping: the traffic of every task edge routed over the target's
//! links ([`taskmap_arch::TrafficRoutes`]), as LibTopoMap reports it.
//!
//! A task edge `{u, v}` of weight `w` sends `w` from `u`'s PE to `v`'s and `w` back (the
//! two entries of the symmetric adjacency), so the loads of all links add up to
//! `Σ w · (links of the route there + links of the route back)`: `2 f_C` on targets whose
//! routes cross `distance` links (meshes, tori, hypercubes, unit-weight graphs).

use serde::Serialize;
use taskmap_arch::{Architecture, PeId, MAX_TRAFFIC_LINKS};
use taskmap_graph::TaskGraph;

use crate::mapping::Mapping;

/// How many of the busiest links a report names.
pub const BUSIEST_LINKS: usize = 10;

/// A link and its load.
#[derive(Clone, Debug, Serialize)]
pub struct BusyLink {
    /// Its id.
    pub link: u64,
    /// Its name (`"3->4"`, `"level-1 group 2 up"`).
    pub name: String,
    /// The traffic it carries.
    pub load: f64,
}

/// The link loads of a mapping.
#[derive(Clone, Debug, Serialize)]
pub struct Congestion {
    /// The routing followed.
    pub routing: String,
    /// Directed links of the target, and those that carry traffic.
    pub links: u64,
    pub links_used: u64,
    /// The largest load, and the mean over the links.
    pub max_load: f64,
    pub mean_load: f64,
    /// The busiest links, most loaded first (ties: lower id), at most [`BUSIEST_LINKS`].
    pub busiest: Vec<BusyLink>,
    /// `(link id, load)` of every link that carries traffic, by id (the others carry 0).
    pub loads: Vec<(u64, f64)>,
}

/// The congestion of `mapping` (of `graph`, on `arch`), or `None` when the target has no
/// routes (a distance matrix) or more than [`MAX_TRAFFIC_LINKS`] link ids.
pub fn congestion(
    graph: &TaskGraph,
    arch: &dyn Architecture,
    mapping: &Mapping,
) -> Option<Congestion> {
    let routes = arch.traffic_routes()?;
    let ids = routes.link_count();
    if ids > MAX_TRAFFIC_LINKS {
        return None;
    }
    let links = (0..ids).filter(|&l| routes.exists(l)).count() as u64;
    // The tasks of every PE (a counting sort), then the traffic from each PE to the
    // others, gathered in a scratch row of k entries.
    let pes = mapping.as_slice();
    let k = arch.pe_count() as usize;
    let mut start = vec![0usize; k + 1];
    for p in pes {
        start[p.idx() + 1] += 1;
    }
    for p in 0..k {
        start[p + 1] += start[p];
    }
    let mut fill = start.clone();
    let mut by_pe = vec![0u32; pes.len()];
    for (t, p) in pes.iter().enumerate() {
        by_pe[fill[p.idx()]] = t as u32;
        fill[p.idx()] += 1;
    }
    let mut loads = vec![0f64; ids as usize];
    let mut row = vec![0u64; k];
    let mut touched: Vec<u32> = Vec::new();
    let mut demands: Vec<(PeId, f64)> = Vec::new();
    for p in 0..k {
        for &u in &by_pe[start[p]..start[p + 1]] {
            for (&v, &w) in graph.neighbors(u).iter().zip(graph.edge_weights(u)) {
                let q = pes[v as usize].idx();
                if q != p {
                    if row[q] == 0 {
                        touched.push(q as u32);
                    }
                    row[q] = row[q].saturating_add(w);
                }
            }
        }
        if touched.is_empty() {
            continue;
        }
        touched.sort_unstable();
        demands.clear();
        for &q in &touched {
            demands.push((PeId(q), row[q as usize] as f64));
            row[q as usize] = 0;
        }
        touched.clear();
        routes.spread(PeId(p as u32), &demands, &mut loads);
    }
    let used: Vec<(u64, f64)> = loads
        .iter()
        .enumerate()
        .filter(|(_, &l)| l > 0.0)
        .map(|(i, &l)| (i as u64, l))
        .collect();
    let max_load = used.iter().map(|u| u.1).fold(0.0, f64::max);
    let mean_load = if links == 0 {
        0.0
    } else {
        used.iter().map(|u| u.1).sum::<f64>() / links as f64
    };
    let by_load = |a: &(u64, f64), b: &(u64, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut order = used.clone();
    let top = BUSIEST_LINKS.min(order.len());
    if top > 0 {
        order.select_nth_unstable_by(top - 1, by_load);
    }
    order.truncate(top);
    order.sort_by(by_load);
    let busiest = order
        .into_iter()
        .map(|(l, load)| BusyLink {
            link: l,
            name: routes.link_name(l),
            load,
        })
        .collect();
    Some(Congestion {
        routing: routes.kind().to_string(),
        links,
        links_used: used.len() as u64,
        max_load,
        mean_load,
        busiest,
        loads: used,
    })
}
