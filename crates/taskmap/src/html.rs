//! A mapping as one self-contained HTML page (`map --html`, `eval --html`): the summary,
//! the comparison with the ranks in order, the target drawn with every PE coloured by its
//! load and every link by its traffic, a node-to-node traffic heat map and the histogram of
//! traffic by distance. Inline SVG and CSS only: the page fetches nothing.

use std::fmt::Write as _;

use taskmap_arch::{Architecture, Machine, Shape};
use taskmap_graph::TaskGraph;

use crate::congestion::{congestion, Congestion};
use crate::mapping::Mapping;
use crate::metrics::Evaluation;
use crate::report::{LaunchFiles, LaunchReport};

/// Most PEs drawn one by one (larger targets get the heat map and histogram only).
pub const MAX_DRAWN_PES: u32 = 4096;

/// Most rows and columns of the heat map (PEs are grouped into blocks beyond it).
const HEAT_CELLS: usize = 64;

/// What a mapping page shows.
pub struct MappingPage<'a> {
    /// The page title (the command).
    pub title: &'a str,
    /// The graph's name and the target spec, as the report gives them.
    pub graph_name: &'a str,
    pub target: &'a str,
    /// The algorithm, when a mapper ran.
    pub algorithm: Option<&'a str>,
    pub graph: &'a TaskGraph,
    pub arch: &'a dyn Architecture,
    pub mapping: &'a Mapping,
    pub evaluation: &'a Evaluation,
    /// The target's hosts, for machines.
    pub machine: Option<&'a Machine>,
    /// The link loads, when computed already.
    pub congestion: Option<&'a Congestion>,
}

/// `s` with `&`, `<`, `>` and `"` escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The start of a page: its head, style and title.
fn page_start(title: &str) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n\
         <style>body{{font-family:sans-serif;margin:2em;max-width:75em}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .6em;text-align:right}}\
         th{{text-align:left}}svg{{border:1px solid #eee;margin:.5em 0}}\
         .legend{{font-size:.85em;color:#555}}</style></head><body>\n<h1>{}</h1>\n",
        esc(title),
        esc(title)
    );
    s
}

/// A colour from white (0) through yellow to dark red (1).
fn heat(x: f64) -> String {
    let x = if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (r, g, b) = if x < 0.5 {
        let t = x / 0.5;
        (255.0, 255.0 - 40.0 * t, 255.0 - 200.0 * t)
    } else {
        let t = (x - 0.5) / 0.5;
        (255.0 - 95.0 * t, 215.0 - 200.0 * t, 55.0 - 40.0 * t)
    };
    format!("#{:02x}{:02x}{:02x}", r as u8, g as u8, b as u8)
}

impl MappingPage<'_> {
    /// The page.
    pub fn render(&self) -> String {
        let k = self.arch.pe_count();
        let mut load = vec![0u64; k as usize];
        for (t, p) in self.mapping.as_slice().iter().enumerate() {
            load[p.idx()] += self.graph.vertex_weight(t as u32, 0);
        }
        // Link loads colour the links of a grid; other targets show them only when
        // computed already (`--congestion`: a graph target costs a Dijkstra per PE).
        let owned;
        let congestion = match self.congestion {
            Some(c) => Some(c),
            None if k <= MAX_DRAWN_PES && matches!(self.arch.shape(), Shape::Grid { .. }) => {
                owned = congestion(self.graph, self.arch, self.mapping);
                owned.as_ref()
            }
            None => None,
        };
        let mut s = page_start(self.title);
        self.summary(&mut s, congestion);
        s.push_str("<h2>The target</h2>\n");
        self.target_drawing(&mut s, &load, congestion);
        s.push_str("<h2>Traffic between nodes</h2>\n");
        self.heat_map(&mut s);
        s.push_str("<h2>Traffic by distance</h2>\n");
        self.histogram(&mut s);
        s.push_str("</body></html>\n");
        s
    }

    fn summary(&self, s: &mut String, congestion: Option<&Congestion>) {
        let e = self.evaluation;
        let mut rows: Vec<(String, String)> = vec![
            ("graph".into(), esc(self.graph_name)),
            ("target".into(), esc(self.target)),
        ];
        if let Some(a) = self.algorithm {
            rows.push(("algorithm".into(), esc(a)));
        }
        rows.extend([
            ("tasks, edges".into(), format!("{}, {}", e.tasks, e.edges)),
            ("PEs (used)".into(), format!("{} ({})", e.pes, e.pes_used)),
            ("f_C".into(), e.comm_cost.to_string()),
            ("edge cut".into(), e.edge_cut.to_string()),
            (
                "dilation mean / max".into(),
                format!("{:.3} / {}", e.dilation_mean, e.dilation_max),
            ),
        ]);
        if let Some(l) = e.loads.first() {
            rows.push((
                "load min / max / mean".into(),
                format!("{} / {} / {:.2}", l.min, l.max, l.avg),
            ));
        }
        if let Some(b) = e.balanced {
            rows.push((
                "balance".into(),
                if b { "holds" } else { "violated" }.into(),
            ));
        }
        let order = LaunchReport::new(
            self.graph,
            self.arch,
            self.mapping,
            e.comm_cost,
            self.machine,
            &LaunchFiles::default(),
        );
        if let Ok(o) = order {
            let change = o.change_percent.map_or(String::new(), |c| {
                format!("; {c:+.1} % f_C against ranks in order")
            });
            rows.push((
                "ranks in order".into(),
                format!("f_C {}{change}", o.in_order_comm_cost),
            ));
            if let Some(h) = o.hosts_used {
                rows.push(("hosts used".into(), h.to_string()));
            }
        }
        if let Some(c) = congestion {
            rows.push((
                "link load max / mean".into(),
                format!(
                    "{} / {:.2} over {} links ({})",
                    c.max_load,
                    c.mean_load,
                    c.links,
                    esc(&c.routing)
                ),
            ));
        }
        s.push_str("<table>\n");
        for (k, v) in rows {
            let _ = writeln!(s, "<tr><th>{k}</th><td>{v}</td></tr>");
        }
        s.push_str("</table>\n");
    }

    /// Meshes and tori as grids (3-D as slices), trees and machines as nested boxes.
    fn target_drawing(&self, s: &mut String, load: &[u64], congestion: Option<&Congestion>) {
        let k = self.arch.pe_count();
        if k > MAX_DRAWN_PES {
            let _ = writeln!(s, "<p>{k} PEs: too many to draw one by one.</p>");
            return;
        }
        let max_load = load.iter().copied().max().unwrap_or(0).max(1) as f64;
        match self.arch.shape() {
            Shape::Grid { dims, torus } if dims.len() <= 3 => {
                self.grid(s, dims, torus, load, max_load, congestion)
            }
            Shape::Hypercube { dim } if dim <= 12 => {
                let dims = [1u32 << dim.div_ceil(2), 1 << (dim / 2)];
                // Drawn on the binary labels' grid (no links: they are not neighbours).
                self.grid_cells(s, &dims, load, max_load);
            }
            _ => match self.tree_levels() {
                // A tree of one level, or an envelope far larger than its PEs, is drawn as
                // its PEs in id order.
                Some((counts, present))
                    if counts.len() >= 2 && present.len() <= 4 * MAX_DRAWN_PES as usize =>
                {
                    self.boxes(s, &counts, &present, load, max_load)
                }
                _ => {
                    let _ = writeln!(
                        s,
                        "<p>This target ({}) is drawn as its PEs in id order.</p>",
                        esc(self.arch.name())
                    );
                    let cols = (k as f64).sqrt().ceil() as u32;
                    self.grid_cells(s, &[cols, k.div_ceil(cols)], load, max_load);
                }
            },
        }
        let _ = writeln!(
            s,
            "<p class=\"legend\">PEs: load (vertex weight 0) from white (0) to dark red ({}); \
             links: traffic from light to dark.</p>",
            max_load
        );
    }

    /// The levels of a tree target, top-down, and the envelope positions that exist.
    fn tree_levels(&self) -> Option<(Vec<u32>, Vec<bool>)> {
        if let Some(m) = self.machine {
            let counts = m.counts().to_vec();
            let total: u64 = counts.iter().map(|&c| u64::from(c)).product();
            if total > 4 * u64::from(MAX_DRAWN_PES) {
                return None;
            }
            let mut present = vec![m.positions().is_none(); total as usize];
            if let Some(p) = m.positions() {
                for &x in p {
                    present[x as usize] = true;
                }
            }
            return Some((counts, present));
        }
        let spec = self.arch.spec();
        let rest = spec.strip_prefix("tree:")?;
        let counts: Vec<u32> = rest
            .split('/')
            .next()?
            .split(':')
            .map(|c| c.parse().ok())
            .collect::<Option<Vec<u32>>>()?;
        let counts: Vec<u32> = counts.into_iter().rev().collect();
        Some((counts, vec![true; self.arch.pe_count() as usize]))
    }

    /// A grid of PE squares (dimension 0 across, dimension 1 down), no links.
    fn grid_cells(&self, s: &mut String, dims: &[u32], load: &[u64], max_load: f64) {
        let (w, h) = (dims[0], dims.get(1).copied().unwrap_or(1));
        let cell = 18u32;
        let _ = writeln!(
            s,
            "<svg width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">",
            w * cell + 4,
            h * cell + 4,
            w * cell + 4,
            h * cell + 4
        );
        for (p, &l) in load.iter().enumerate() {
            let (x, y) = (p as u32 % w, p as u32 / w);
            let _ = writeln!(
                s,
                "<rect class=\"pe\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#888\"><title>PE {p}: load {l}</title></rect>",
                2 + x * cell,
                2 + y * cell,
                cell - 2,
                cell - 2,
                heat(l as f64 / max_load)
            );
        }
        s.push_str("</svg>\n");
    }

    /// A 1-, 2- or 3-D mesh or torus: PEs as squares, each link between neighbours as a
    /// line coloured by the traffic of both its directions; 3-D as slices side by side.
    fn grid(
        &self,
        s: &mut String,
        dims: &[u32],
        torus: bool,
        load: &[u64],
        max_load: f64,
        congestion: Option<&Congestion>,
    ) {
        let (nx, ny, nz) = (
            dims[0],
            dims.get(1).copied().unwrap_or(1),
            dims.get(2).copied().unwrap_or(1),
        );
        let (cell, gap) = (28u32, 24u32);
        let slice_w = nx * cell + 8;
        let (width, height) = (nz * (slice_w + gap), ny * cell + 30);
        // Traffic of every undirected neighbour pair, from the link loads.
        let mut pair: std::collections::HashMap<(u32, u32), f64> = Default::default();
        if let (Some(c), Some(r)) = (congestion, self.arch.routing()) {
            for &(l, v) in &c.loads {
                if let Some((a, b)) = r.link_endpoints(l as u32) {
                    *pair.entry((a.0.min(b.0), a.0.max(b.0))).or_default() += v;
                }
            }
        }
        let max_pair = pair.values().copied().fold(0.0, f64::max).max(1.0);
        let _ = writeln!(
            s,
            "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
        );
        let centre = |p: u32| {
            let (x, y, z) = (p % nx, (p / nx) % ny, p / (nx * ny));
            (
                z * (slice_w + gap) + 4 + x * cell + cell / 2,
                20 + y * cell + cell / 2,
            )
        };
        for z in 0..nz {
            if nz > 1 {
                let _ = writeln!(
                    s,
                    "<text x=\"{}\" y=\"14\" font-size=\"12\">z = {z}</text>",
                    z * (slice_w + gap) + 4
                );
            }
        }
        // Links within a slice (wrap-around links of a torus drawn as short stubs).
        let k = self.arch.pe_count();
        for p in 0..k {
            for (d, &n) in dims.iter().enumerate().take(2) {
                let stride: u32 = dims[..d].iter().product();
                let x = (p / stride) % n;
                let q = if x + 1 < n {
                    p + stride
                } else if torus && n > 2 {
                    p + stride - n * stride
                } else {
                    continue;
                };
                let t = pair.get(&(p.min(q), p.max(q))).copied().unwrap_or(0.0);
                let (x1, y1) = centre(p);
                let (mut x2, mut y2) = centre(q);
                if x + 1 == n {
                    // Wrap-around: a stub beyond the last PE.
                    x2 = if d == 0 { x1 + cell / 2 } else { x1 };
                    y2 = if d == 1 { y1 + cell / 2 } else { y1 };
                }
                let _ = writeln!(
                    s,
                    "<line class=\"link\" x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\" stroke=\"{}\" stroke-width=\"5\"><title>{p}-{q}: {t}</title></line>",
                    heat(0.15 + 0.85 * t / max_pair)
                );
            }
        }
        for p in 0..k {
            let (cx, cy) = centre(p);
            let l = load[p as usize];
            let _ = writeln!(
                s,
                "<rect class=\"pe\" x=\"{}\" y=\"{}\" width=\"16\" height=\"16\" fill=\"{}\" stroke=\"#555\"><title>PE {p}: load {l}</title></rect>",
                cx - 8,
                cy - 8,
                heat(l as f64 / max_load)
            );
        }
        s.push_str("</svg>\n");
    }

    /// A tree (top-down `counts`) as nested boxes: the top level's groups one under the
    /// other, the levels below as boxes inside, PEs as squares; a box's outline is
    /// coloured by the traffic over its link up (the edge weight between its tasks and the
    /// others).
    fn boxes(&self, s: &mut String, counts: &[u32], present: &[bool], load: &[u64], max_load: f64) {
        let cell = 14u32;
        let levels = counts.len();
        // PEs per group at each depth (block[d] = PEs under a depth-d node).
        let mut block = vec![1u32; levels + 1];
        for d in (0..levels).rev() {
            block[d] = block[d + 1] * counts[d];
        }
        // The envelope position of every PE, and the traffic leaving every box.
        let position: Vec<u32> = (0..present.len() as u32)
            .filter(|&p| present[p as usize])
            .collect();
        // Boxes are the depths 1 to levels - 1 (the PEs themselves have no box).
        let mut leaving: Vec<Vec<u64>> = (0..levels)
            .map(|d| vec![0u64; (block[0] / block[d]) as usize])
            .collect();
        let pes = self.mapping.as_slice();
        for (u, v, w) in self.graph.edges() {
            let (a, b) = (
                position[pes[u as usize].idx()],
                position[pes[v as usize].idx()],
            );
            for d in 1..levels {
                let (ga, gb) = (a / block[d], b / block[d]);
                if ga != gb {
                    leaving[d][ga as usize] += w;
                    leaving[d][gb as usize] += w;
                }
            }
        }
        let max_leaving: Vec<f64> = leaving
            .iter()
            .map(|l| l.iter().copied().max().unwrap_or(0).max(1) as f64)
            .collect();
        let rows = counts[0];
        let (pad, gap) = (4u32, 4u32);
        // Widths bottom-up: a PE is a cell, a box holds its children with gaps and a pad.
        let mut width = vec![cell; levels + 1];
        for d in (1..levels).rev() {
            width[d] = counts[d] * width[d + 1] + (counts[d] - 1) * gap + 2 * pad;
        }
        // The x of the depth-d box holding envelope position `pos` (the PE's own at
        // depth `levels`).
        let box_x = |d: usize, pos: u32| -> u32 {
            let mut x = 5;
            for e in 1..d {
                x += pad + ((pos % block[e]) / block[e + 1]) * (width[e + 1] + gap);
            }
            x
        };
        let depth = levels as u32;
        let row_h = cell + 2 * pad * depth.saturating_sub(1) + gap;
        let (svg_w, svg_h) = (width[1] + 10, rows * row_h + 10);
        let _ = writeln!(
            s,
            "<svg width=\"{svg_w}\" height=\"{svg_h}\" viewBox=\"0 0 {svg_w} {svg_h}\">"
        );
        let mut pe = 0u32;
        for r in 0..rows {
            let y0 = 5 + r * row_h;
            for d in 1..levels {
                for g in 0..block[1] / block[d] {
                    let first = r * block[1] + g * block[d];
                    if !(first..first + block[d]).any(|p| present[p as usize]) {
                        continue;
                    }
                    let inset = (d as u32 - 1) * pad;
                    let out = leaving[d][(first / block[d]) as usize];
                    let _ = writeln!(
                        s,
                        "<rect class=\"group\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"><title>traffic out {out}</title></rect>",
                        box_x(d, first),
                        y0 + inset,
                        width[d],
                        row_h - gap - 2 * inset,
                        heat(0.15 + 0.85 * out as f64 / max_leaving[d])
                    );
                }
            }
            for pos in r * block[1]..(r + 1) * block[1] {
                if !present[pos as usize] {
                    continue;
                }
                let l = load[pe as usize];
                let _ = writeln!(
                    s,
                    "<rect class=\"pe\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#555\"><title>PE {pe}: load {l}</title></rect>",
                    box_x(levels, pos) + 1,
                    y0 + pad * depth.saturating_sub(1) + 1,
                    cell - 2,
                    cell - 2,
                    heat(l as f64 / max_load)
                );
                pe += 1;
            }
        }
        s.push_str("</svg>\n");
    }

    /// Traffic between nodes (hosts of a machine; otherwise PEs, or blocks of consecutive
    /// PEs beyond 64), colour on a logarithmic scale.
    fn heat_map(&self, s: &mut String) {
        let k = self.arch.pe_count() as usize;
        let (n, group_of, label): (usize, Box<dyn Fn(usize) -> usize>, String) = match self.machine
        {
            Some(m) if m.hosts().len() > 1 && m.hosts().len() <= HEAT_CELLS => {
                let sites = m.sites();
                (
                    m.hosts().len(),
                    Box::new(move |p| sites[p].host as usize),
                    "hosts".into(),
                )
            }
            _ if k <= HEAT_CELLS => (k, Box::new(|p| p), "PEs".into()),
            _ => {
                let per = k.div_ceil(HEAT_CELLS);
                (
                    k.div_ceil(per),
                    Box::new(move |p| p / per),
                    format!("blocks of {per} consecutive PEs"),
                )
            }
        };
        let mut m = vec![0u64; n * n];
        let pes = self.mapping.as_slice();
        for (u, v, w) in self.graph.edges() {
            let (a, b) = (
                group_of(pes[u as usize].idx()),
                group_of(pes[v as usize].idx()),
            );
            if a != b {
                m[a * n + b] += w;
                m[b * n + a] += w;
            }
        }
        let max = m.iter().copied().max().unwrap_or(0);
        let cell = (480 / n.max(1)).clamp(4, 24) as u32;
        let size = cell * n as u32 + 2;
        let _ = writeln!(
            s,
            "<svg width=\"{size}\" height=\"{size}\" viewBox=\"0 0 {size} {size}\">"
        );
        let scale = ((max as f64) + 1.0).ln().max(1e-9);
        for a in 0..n {
            for b in 0..n {
                let v = m[a * n + b];
                let _ = writeln!(
                    s,
                    "<rect class=\"heat\" x=\"{}\" y=\"{}\" width=\"{cell}\" height=\"{cell}\" fill=\"{}\"><title>{a} - {b}: {v}</title></rect>",
                    1 + b as u32 * cell,
                    1 + a as u32 * cell,
                    heat(((v as f64) + 1.0).ln() / scale)
                );
            }
        }
        s.push_str("</svg>\n");
        let _ = writeln!(
            s,
            "<p class=\"legend\">Rows and columns: {label}; colour: edge weight between them, \
             logarithmic, white 0 to dark red {max}.</p>"
        );
    }

    /// The communication weight at each distance, as bars.
    fn histogram(&self, s: &mut String) {
        // At most 48 bars: neighbouring distances share one beyond that.
        let all = &self.evaluation.distance_histogram;
        let per = all.len().div_ceil(48).max(1);
        let bins: Vec<crate::metrics::DistanceBin> = all
            .chunks(per)
            .map(|c| crate::metrics::DistanceBin {
                distance: c[0].distance,
                edges: c.iter().map(|b| b.edges).sum(),
                weight: c.iter().map(|b| b.weight).sum(),
            })
            .collect();
        let total: u64 = bins.iter().map(|b| b.weight).sum();
        let bar_w = 60u32;
        let (width, height) = ((bins.len() as u32).max(1) * (bar_w + 10) + 20, 220u32);
        let _ = writeln!(
            s,
            "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
        );
        for (i, b) in bins.iter().enumerate() {
            let share = if total == 0 {
                0.0
            } else {
                b.weight as f64 / total as f64
            };
            let h = (share * 160.0).round() as u32;
            let x = 10 + i as u32 * (bar_w + 10);
            let _ = writeln!(
                s,
                "<rect class=\"bar\" x=\"{x}\" y=\"{}\" width=\"{bar_w}\" height=\"{h}\" fill=\"#4a7ab5\"><title>distance {}: {} edges, weight {}</title></rect>\n\
                 <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{:.1} %</text>\n\
                 <text x=\"{}\" y=\"210\" font-size=\"11\" text-anchor=\"middle\">d = {}</text>",
                185 - h,
                b.distance,
                b.edges,
                b.weight,
                x + bar_w / 2,
                180 - h,
                share * 100.0,
                x + bar_w / 2,
                b.distance
            );
        }
        s.push_str("</svg>\n");
        s.push_str(
            "<p class=\"legend\">Share of the communication weight at each distance between \
             the two PEs of an edge (d = 0: edges inside a PE; with many distances, a bar \
             counts the distances from its label up to the next one).</p>\n",
        );
    }
}

/// `taskmap compare --html`: per graph and seed, the table of the algorithms (with the
/// largest link load, when scored) and their f_C as bars, in the rows' order
/// (`--rank-by` orders them).
pub fn compare_page(title: &str, rows: &[crate::report::CompareRow]) -> String {
    let mut s = page_start(title);
    for group in rows.chunk_by(|a, b| a.group == b.group) {
        let first = &group[0];
        let _ = writeln!(
            s,
            "<h2>{} onto {}, seed {}</h2>",
            esc(&first.graph),
            esc(&first.target),
            first.seed
        );
        s.push_str(
            "<table>\n<tr><th>algorithm</th><th>f_C</th><th>largest link load</th>\
             <th>cut</th><th>feasible</th><th>time (ms)</th></tr>\n",
        );
        for r in group {
            let cell = |v: Option<String>| v.unwrap_or_else(|| "-".into());
            let _ = writeln!(
                s,
                "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td></tr>",
                esc(&r.algorithm),
                cell(r.comm_cost.map(|c| c.to_string())),
                cell(r.max_congestion.map(|c| c.to_string())),
                cell(r.edge_cut.map(|c| c.to_string())),
                match (&r.error, r.feasible) {
                    (Some(e), _) => format!("not applicable: {}", esc(e)),
                    (None, true) => "yes".into(),
                    (None, false) => "no".into(),
                },
                r.time_ms
            );
        }
        s.push_str("</table>\n");
        // f_C as bars, relative to the largest in the group.
        let mapped: Vec<&crate::report::CompareRow> =
            group.iter().filter(|r| r.comm_cost.is_some()).collect();
        let max = mapped
            .iter()
            .filter_map(|r| r.comm_cost)
            .max()
            .unwrap_or(0)
            .max(1) as f64;
        let (bar_h, label_w, bar_w) = (18u32, 220u32, 420u32);
        let (width, height) = (
            label_w + bar_w + 140,
            mapped.len() as u32 * (bar_h + 6) + 10,
        );
        let _ = writeln!(
            s,
            "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
        );
        for (i, r) in mapped.iter().enumerate() {
            let fc = r.comm_cost.unwrap_or(0);
            let y = 5 + i as u32 * (bar_h + 6);
            let w = ((fc as f64 / max) * f64::from(bar_w)).round() as u32;
            let colour = if r.feasible { "#4a7ab5" } else { "#bbbbbb" };
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\n\
                 <rect class=\"bar\" x=\"{label_w}\" y=\"{y}\" width=\"{w}\" height=\"{bar_h}\" fill=\"{colour}\"><title>{}: f_C {fc}</title></rect>\n\
                 <text x=\"{}\" y=\"{}\" font-size=\"12\">{fc}</text>",
                label_w - 6,
                y + bar_h - 5,
                esc(&r.algorithm),
                esc(&r.algorithm),
                label_w + w + 6,
                y + bar_h - 5
            );
        }
        s.push_str("</svg>\n");
        s.push_str(
            "<p class=\"legend\">f_C of each algorithm's mapping, relative to the largest; grey: \
             outside the constraints.</p>\n",
        );
    }
    s.push_str("</body></html>\n");
    s
}
