//! Phase 2: a phase-1 solution handed over (`probe`), the phase-2 search from its end,
//! and a full solution recorded (mapped back to the original position, kept distinct).

use super::*;

impl Searcher<'_> {
    /// A phase-1 solution of `len` moves whose last move turned face `last`: try to finish
    /// it with phase 2 within the budget.
    pub(super) fn probe(&mut self, lane: &mut Lane, len: usize, last: usize) {
        self.probes += 1;
        if let Some(limit) = self.limits.probe_limit {
            if self.probes > limit {
                self.stop = Some(Stop::ProbeLimit);
                return;
            }
        }
        let t = self.t;
        // An anytime search may have lowered the cap since the lane started.
        let limit = lane.limit.min(self.cap.saturating_sub(lane.dir.npre));
        let Some(budget) = limit.checked_sub(len as u8) else {
            return;
        };
        while lane.valid <= len {
            let i = lane.valid;
            lane.cubes[i] = lane.cubes[i - 1].apply_move(Move::ALL[lane.path1[i - 1] as usize]);
            lane.valid += 1;
        }
        let c = lane.cubes[len];
        let cp = perm_index(std::array::from_fn::<u8, 8, _>(|i| c.corner(i)));
        let s4 = perm_index(std::array::from_fn::<u8, 4, _>(|i| c.edge(8 + i) & 3)) as u8;
        let cs = t.cpsym[cp as usize];
        if t.cp_dist[(cs >> 4) as usize] > budget {
            return;
        }
        let hc = t.cs_prune[t.cs_index(cs, s4)];
        if hc > budget {
            return;
        }
        let e8 = perm_index(std::array::from_fn::<u8, 8, _>(|i| c.edge(i)));
        let h = hc.max(t.p2.get(t.p2_index_sym(cs, e8)));
        if h > budget {
            return;
        }
        if h == 0 {
            self.record(lane, len, 0);
            return;
        }
        for togo in h..=budget {
            if self.phase2(lane, cp, e8, s4, len, 0, togo, last) || self.stop.is_some() {
                return;
            }
        }
    }

    /// Phase-2 IDA* with `togo` moves left; returns whether a solution was recorded.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn phase2(
        &mut self,
        lane: &mut Lane,
        cp: u16,
        e8: u16,
        s4: u8,
        len1: usize,
        depth: usize,
        togo: u8,
        last: usize,
    ) -> bool {
        let t = self.t;
        let mut mask = P2_ALLOWED[last];
        let (cr, er, sr) = (cp as usize * 10, e8 as usize * 10, s4 as usize * 10);
        while mask != 0 {
            let k = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            self.nodes += 1;
            let ncp = t.cp_move[cr + k];
            let ns4 = t.s4_move[sr + k];
            let cs = t.cpsym[ncp as usize];
            if t.cs_prune[t.cs_index(cs, ns4)] >= togo {
                continue;
            }
            let ne8 = t.e8_move[er + k];
            if t.p2.get(t.p2_index_sym(cs, ne8)) >= togo {
                continue;
            }
            let m = PHASE2_MOVES[k];
            lane.path2[depth] = m;
            if togo == 1 {
                // Both distances are 0: solved.
                if self.record(lane, len1, depth + 1) {
                    return true;
                }
                continue;
            }
            if self.phase2(
                lane,
                ncp,
                ne8,
                ns4,
                len1,
                depth + 1,
                togo - 1,
                m as usize / 3,
            ) {
                return true;
            }
            if self.stop.is_some() {
                return false;
            }
        }
        false
    }

    /// Records `path1[..len1] + path2[..len2]` of `lane`, mapped back to the original
    /// position, if new; returns whether it was new. Sets `stop` when enough solutions
    /// are known.
    pub(super) fn record(&mut self, lane: &Lane, len1: usize, len2: usize) -> bool {
        let syms = symmetries();
        let back = syms.inv[lane.dir.sym] as usize;
        let mut moves: Vec<Move> = Vec::with_capacity(len1 + len2 + 1);
        let pre = &lane.dir.pre[..lane.dir.npre as usize];
        for &m in lane.path1[..len1]
            .iter()
            .chain(&lane.path2[..len2])
            .chain(pre)
        {
            push_merged(&mut moves, syms.conj_move[back][m as usize]);
        }
        if lane.dir.inverse {
            moves = moves.iter().rev().map(|m| m.inverse()).collect();
        }
        if self.known.contains(&moves) {
            return false;
        }
        self.known.push(moves);
        self.limits.arm();
        if self.known.len() >= self.want {
            if !self.anytime {
                self.stop = Some(Stop::Completed);
                return true;
            }
            // Only solutions shorter than the longest of the `want` shortest are wanted
            // now: `want` is small (the solution count asked), so a selection is cheap.
            let mut lens: Vec<usize> = self.known.iter().map(Vec::len).collect();
            let (_, &mut nth, _) = lens.select_nth_unstable(self.want - 1);
            let nth = u8::try_from(nth).unwrap_or(u8::MAX);
            self.cap = self.cap.min(nth.saturating_sub(1));
            if self.cap < self.floor {
                // The shortest possible were found.
                self.stop = Some(Stop::Completed);
            }
        }
        true
    }
}
