//! Ranking what every scope gathered for one query: the [`Candidate`]s read from memory
//! files and the [`IndexedMatches`] scored from an index, ranked together by score and then
//! the tie-breaks ([`Ranking`], [`keep_best`]).

use std::ops::Range;
use std::sync::Arc;

use super::Found;
use crate::domain::memory::{MemoryFile, MemoryType};
use crate::domain::recall::index::Gathered;
use crate::domain::recall::scoring::{Collection, FIELDS, FieldUnits, Query, Stats, points};
use crate::domain::recall::usage::Used;
use crate::domain::scope::ScopeKind;
use crate::domain::store::Stamp;

/// One memory that holds a query term.
pub struct Candidate {
    /// The scope's position in the query's scope list.
    pub order: usize,
    /// The file, relative to its scope folder.
    pub rel: String,
    /// Its scope.
    pub scope: ScopeKind,
    /// Its type.
    pub kind: MemoryType,
    /// The parsed file; `None` when it was scored from the index (read when needed).
    /// (Boxed: a query matching every memory moves thousands of candidates.)
    pub file: Option<Box<MemoryFile>>,
    /// Its stamp when scored (from the index: the file must still have it when read).
    pub stamp: Stamp,
    /// Its field lengths in terms.
    pub lengths: [u32; FIELDS],
    /// Occurrences of each query term, per field.
    pub units: Vec<FieldUnits>,
    /// BM25F, once every scope is gathered.
    pub score: f64,
    /// The score as shown and compared.
    pub points: u32,
    /// Type words of its type in the query (the first tie-break).
    pub affinity: u32,
    /// How lately and how often it was read or cited (the next tie-break).
    pub used: Used,
}

impl Candidate {
    /// A memory scored from an index (its file not read): its type, stamp and field lengths
    /// as indexed, and its query terms' occurrences.
    pub fn from_index(
        rel: &str,
        (kind, stamp, lengths): (MemoryType, Stamp, [u32; FIELDS]),
        units: Vec<FieldUnits>,
        (order, scope): (usize, ScopeKind),
    ) -> Candidate {
        Candidate {
            order,
            rel: rel.to_string(),
            scope,
            kind,
            file: None,
            stamp,
            lengths,
            units,
            score: 0.0,
            points: 0,
            affinity: 0,
            used: Used::default(),
        }
    }

    /// What it is ranked by.
    fn key(&self) -> RankKey<'_> {
        RankKey {
            points: self.points,
            affinity: self.affinity,
            used: self.used,
            day: day(&self.stamp),
            order: self.order,
            rel: self.rel.as_bytes(),
        }
    }
}

/// The day a memory was last written (the freshness tie-break: newer first). Whole days, so
/// that files a clone or a checkout wrote seconds apart tie and fall through to the path.
fn day(stamp: &Stamp) -> i64 {
    stamp.mtime_ns.div_euclid(86_400 * 1_000_000_000)
}

/// What a memory is ranked by: score, then type words, use (read or cited lately, then
/// often), freshness, scope position and path. Scope position and path name one memory, so no
/// two memories tie.
#[derive(Debug, Clone, Copy)]
struct RankKey<'a> {
    points: u32,
    affinity: u32,
    used: Used,
    day: i64,
    order: usize,
    rel: &'a [u8],
}

impl RankKey<'_> {
    /// The ranking: better first.
    fn cmp(&self, other: &RankKey<'_>) -> std::cmp::Ordering {
        other
            .points
            .cmp(&self.points)
            .then(other.affinity.cmp(&self.affinity))
            .then(other.used.cmp(&self.used))
            .then(other.day.cmp(&self.day))
            .then(self.order.cmp(&other.order))
            .then_with(|| self.rel.cmp(other.rel))
    }
}

/// The ranking of candidates ([`RankKey::cmp`]).
fn rank(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    a.key().cmp(&b.key())
}

/// Keeps the best `max` candidates, best first. Positions are selected, not candidates, so
/// that a query matching every memory does not move thousands of them around.
pub fn keep_best(candidates: &mut Vec<Candidate>, max: usize) {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    let by_rank = |a: &usize, b: &usize| rank(&candidates[*a], &candidates[*b]);
    if order.len() > max {
        if max == 0 {
            order.clear();
        } else {
            order.select_nth_unstable_by(max, by_rank);
            order.truncate(max);
        }
    }
    let mut keep = vec![false; candidates.len()];
    for i in order {
        keep[i] = true;
    }
    let mut at = 0;
    candidates.retain(|_| {
        at += 1;
        keep[at - 1]
    });
    candidates.sort_by(rank);
}

/// Every scope's statistics and matches for one query, ranked together: IDF and average
/// lengths are taken over every scope queried.
pub struct Ranking {
    collection: Collection,
    df: Vec<u64>,
    candidates: Vec<Candidate>,
    indexed: Vec<IndexedMatches>,
}

/// Where a ranked memory is: a candidate, or a match of an index's.
#[derive(Debug, Clone, Copy)]
enum Place {
    Candidate(usize),
    Indexed(usize, usize),
}

impl Ranking {
    /// Nothing gathered yet, for `query`'s terms.
    pub fn new(query: &Query) -> Ranking {
        Ranking {
            collection: Collection::default(),
            df: vec![0; query.tokens().len()],
            candidates: Vec::new(),
            indexed: Vec::new(),
        }
    }

    /// Adds what one scope gathered.
    pub fn add(&mut self, found: Found) {
        self.collection.merge(&found.collection);
        for (sum, n) in self.df.iter_mut().zip(&found.df) {
            *sum += n;
        }
        if self.candidates.is_empty() {
            self.candidates = found.candidates;
        } else {
            self.candidates.extend(found.candidates);
        }
        self.indexed.extend(found.indexed);
    }

    /// The statistics, and the best `max` memories that score above zero as candidates,
    /// best first, with their score, points, type affinity and use (`used`: of the memory at
    /// a scope position and path). Every memory is scored, but a candidate is built only for
    /// those kept (a query may match every memory).
    pub fn best(
        self,
        query: &Query,
        max: usize,
        used: &dyn Fn(usize, &str) -> Used,
    ) -> (Stats, Vec<Candidate>) {
        let stats = query.stats(&self.collection, &self.df);
        let mut candidates = self.candidates;
        for c in &mut candidates {
            c.score = query.score(&stats, c.lengths, &c.units);
            c.points = points(c.score);
            c.affinity = query.type_affinity(c.kind);
            c.used = used(c.order, &c.rel);
        }
        let mut ranked: Vec<(RankKey<'_>, Place, f64)> = Vec::new();
        for (k, c) in candidates.iter().enumerate() {
            if c.points > 0 {
                ranked.push((c.key(), Place::Candidate(k), c.score));
            }
        }
        for (s, set) in self.indexed.iter().enumerate() {
            ranked.reserve(set.matches.len());
            for (m, x) in set.matches.iter().enumerate() {
                let score = query.score(&stats, x.lengths, set.units(m));
                let points = points(score);
                if points == 0 {
                    continue;
                }
                let rel = set.rel(m);
                let key = RankKey {
                    points,
                    affinity: query.type_affinity(x.kind),
                    used: std::str::from_utf8(rel).map_or(Used::default(), |r| used(set.order, r)),
                    day: day(&x.stamp),
                    order: set.order,
                    rel,
                };
                ranked.push((key, Place::Indexed(s, m), score));
            }
        }
        let by_rank = |a: &(RankKey<'_>, Place, f64), b: &(RankKey<'_>, Place, f64)| a.0.cmp(&b.0);
        if ranked.len() > max {
            if max == 0 {
                ranked.clear();
            } else {
                ranked.select_nth_unstable_by(max, by_rank);
                ranked.truncate(max);
            }
        }
        ranked.sort_by(by_rank);
        let kept: Vec<(Place, f64, (u32, u32, Used))> = ranked
            .iter()
            .map(|(k, place, score)| (*place, *score, (k.points, k.affinity, k.used)))
            .collect();
        drop(ranked);
        let mut read: Vec<Option<Candidate>> = candidates.into_iter().map(Some).collect();
        let mut best = Vec::with_capacity(kept.len());
        for (place, score, (points, affinity, used)) in kept {
            let candidate = match place {
                Place::Candidate(k) => read.get_mut(k).and_then(Option::take),
                Place::Indexed(s, m) => self.indexed.get(s).and_then(|set| set.candidate(m)),
            };
            if let Some(mut c) = candidate {
                c.score = score;
                c.points = points;
                c.affinity = affinity;
                c.used = used;
                best.push(c);
            }
        }
        (stats, best)
    }
}

/// Memories of one scope that hold a query term, scored from an index: only their numbers
/// are kept, and their paths stay in the index's bytes, so that a query matching every memory
/// builds a [`Candidate`] only for the few ranked best ([`Ranking::best`]).
pub struct IndexedMatches {
    /// The index's bytes, where the paths are.
    bytes: Arc<Vec<u8>>,
    /// The scope's position in the query's scope list, and the scope.
    order: usize,
    scope: ScopeKind,
    /// How many query terms each match has units for.
    terms: usize,
    matches: Vec<IndexedMatch>,
    /// `terms` runs of units per match, in match order.
    units: Vec<FieldUnits>,
}

/// One memory of [`IndexedMatches`].
struct IndexedMatch {
    /// Its path: where it is in the index's bytes.
    rel: Range<usize>,
    kind: MemoryType,
    stamp: Stamp,
    lengths: [u32; FIELDS],
}

impl IndexedMatches {
    /// The matches a gather of the index `bytes` found: `entry(j)` is memory `j`'s path
    /// (a slice of `bytes`), type, stamp and lengths. A path that is not a slice of `bytes`
    /// makes that memory a full candidate, pushed to `candidates`.
    pub fn new<'e>(
        bytes: &Arc<Vec<u8>>,
        gathered: &Gathered,
        (order, scope): (usize, ScopeKind),
        entry: impl Fn(usize) -> Option<(&'e str, MemoryType, Stamp, [u32; FIELDS])>,
        candidates: &mut Vec<Candidate>,
    ) -> IndexedMatches {
        let terms = gathered.df.len();
        let mut out = IndexedMatches {
            bytes: Arc::clone(bytes),
            order,
            scope,
            terms,
            matches: Vec::with_capacity(gathered.matches.len()),
            units: Vec::with_capacity(gathered.units.len()),
        };
        for (k, &j) in gathered.matches.iter().enumerate() {
            let Some((rel, kind, stamp, lengths)) = entry(j) else {
                continue;
            };
            let units = gathered.units_of(k);
            match range_in(bytes, rel) {
                Some(range) => {
                    out.matches.push(IndexedMatch {
                        rel: range,
                        kind,
                        stamp,
                        lengths,
                    });
                    out.units.extend_from_slice(units);
                }
                None => candidates.push(Candidate::from_index(
                    rel,
                    (kind, stamp, lengths),
                    units.to_vec(),
                    (order, scope),
                )),
            }
        }
        out
    }

    /// Match number `m`'s path, as bytes.
    fn rel(&self, m: usize) -> &[u8] {
        self.matches
            .get(m)
            .and_then(|x| self.bytes.get(x.rel.clone()))
            .unwrap_or(&[])
    }

    /// Match number `m`'s units.
    fn units(&self, m: usize) -> &[FieldUnits] {
        self.units
            .get(m * self.terms..(m + 1) * self.terms)
            .unwrap_or(&[])
    }

    /// Match number `m` as a candidate.
    fn candidate(&self, m: usize) -> Option<Candidate> {
        let x = self.matches.get(m)?;
        let rel = String::from_utf8_lossy(self.rel(m));
        Some(Candidate::from_index(
            &rel,
            (x.kind, x.stamp, x.lengths),
            self.units(m).to_vec(),
            (self.order, self.scope),
        ))
    }
}

/// Where `part`, a slice of `bytes`, lies in them; `None` when it is not a slice of them.
pub fn range_in(bytes: &[u8], part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(bytes.as_ptr() as usize)?;
    let range = start..start.checked_add(part.len())?;
    (bytes.get(range.clone())? == part.as_bytes()).then_some(range)
}
