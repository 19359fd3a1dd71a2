//! The comparison with Apache Kafka's Java assignors shared by the parity tests: runs our four
//! assignors on each committed scenario (`tools/java-assignors` output), checks them, and
//! compares the sticky ones with Java's results metric by metric.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use super::divergences::{Figures, Known, Verdict};
use super::*;
use kafka_consumer_protocol::assignor::{builtin, ClusterMetadata, GroupMember};
use serde_json::Value;

/// The metrics compared with Java, per scenario and sticky strategy (lower is better for all):
/// rack mismatches (a partition on a member with a rack that holds none of its replicas),
/// partitions moved away from their valid owner, the sum of squared member sizes, cooperative
/// follow-up rounds.
pub const METRICS: [&str; 4] = ["mismatches", "moves", "balance", "rounds"];

/// Per strategy and metric: scenarios where we are better, equal, worse than Java.
#[derive(Default)]
pub struct Tally {
    pub counts: BTreeMap<(&'static str, &'static str), [usize; 3]>,
    pub checked: BTreeMap<&'static str, usize>,
    /// Cooperative-sticky, first rounds' pending entries by where the partition is once the
    /// rebalance is over: on the entry's `to`, on another member, entries without a `to`.
    pub pending_to: [usize; 3],
    /// Groups where Java ends better on some criterion: by our order (better on an earlier
    /// one), listed in the known divergences.
    pub by_order: usize,
    pub listed: usize,
    /// Cooperative-sticky follow-up rounds summed over the set: ours, Java's.
    pub rounds_total: [usize; 2],
    /// Per strategy, summed over the groups where both ends compare: partitions moved away from
    /// their valid owners and rack mismatches, ours and Java's.
    pub moves_total: BTreeMap<&'static str, [usize; 2]>,
    pub mismatches_total: BTreeMap<&'static str, [usize; 2]>,
    /// Per strategy: groups that end with more rack mismatches than Java's at the same sum of
    /// squared sizes (issue 38's measure).
    pub more_mismatches_at_equal_balance: BTreeMap<&'static str, usize>,
    /// Per strategy, moves summed (ours, Java's) over the groups where ours ends no better than
    /// Java's on balance and rack mismatches (criteria 1 and 2): the groups where no move of
    /// ours bought an earlier criterion.
    pub moves_without_trade: BTreeMap<&'static str, [usize; 2]>,
}

impl Tally {
    /// Records one comparison where lower is better.
    pub fn add(&mut self, strategy: &'static str, metric: &'static str, ours: usize, java: usize) {
        let slot = match ours.cmp(&java) {
            std::cmp::Ordering::Less => 0,
            std::cmp::Ordering::Equal => 1,
            std::cmp::Ordering::Greater => 2,
        };
        self.counts.entry((strategy, metric)).or_default()[slot] += 1;
    }

    /// Records the follow-up rounds of one whole cooperative rebalance that ended on both sides.
    pub fn add_rounds(&mut self, ours: usize, java: usize) {
        self.add("cooperative-sticky", "rounds", ours, java);
        self.rounds_total[0] += ours;
        self.rounds_total[1] += java;
    }

    /// Records one group's end on both sides: (sum of squares, mismatches, moves), ours and
    /// Java's.
    pub fn add_end(&mut self, strategy: &'static str, ours: [usize; 3], java: [usize; 3]) {
        let [our_sq, our_mis, our_moves] = ours;
        let [java_sq, java_mis, java_moves] = java;
        let moves = self.moves_total.entry(strategy).or_default();
        moves[0] += our_moves;
        moves[1] += java_moves;
        let mismatches = self.mismatches_total.entry(strategy).or_default();
        mismatches[0] += our_mis;
        mismatches[1] += java_mis;
        let more = self.more_mismatches_at_equal_balance.entry(strategy).or_default();
        *more += usize::from(our_sq == java_sq && our_mis > java_mis);
        let traded = our_sq < java_sq || (our_sq == java_sq && our_mis < java_mis);
        let untraded = self.moves_without_trade.entry(strategy).or_default();
        if !traded {
            untraded[0] += our_moves;
            untraded[1] += java_moves;
        }
    }

    /// Per strategy, at most `listed` groups (those the known divergences give a reason for) end
    /// with more rack mismatches than Java's at the same balance.
    pub fn mismatches_at_most_javas(&self, listed: usize) -> Result<(), String> {
        let errors: Vec<String> = self
            .more_mismatches_at_equal_balance
            .iter()
            .filter(|(_, more)| **more > listed)
            .map(|(strategy, more)| {
                format!("{strategy}: {more} groups end with more rack mismatches than Java's at equal balance")
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    }

    /// Where a set's moves in all may exceed Java's because ours ends with fewer rack mismatches
    /// (or a lower sum of squares) on some groups, which the objective puts before every move:
    /// over the other groups, ours move no more partitions than Java's, per strategy.
    pub fn moves_at_most_javas_without_trade(&self) -> Result<(), String> {
        let errors: Vec<String> = self
            .moves_without_trade
            .iter()
            .filter(|(_, [ours, java])| ours > java)
            .map(|(strategy, [ours, java])| {
                format!("{strategy}: moves where ours is no better on balance or mismatches: ours {ours}, more than Java's {java}")
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    }

    /// Issue 38's targets over the whole set, per strategy: no group ends with more rack
    /// mismatches than Java's at the same balance (beyond `listed`, groups the known divergences
    /// give a reason for), and ours move no more partitions in all.
    pub fn mismatches_and_moves_at_most_javas(&self, listed: usize) -> Result<(), String> {
        let mut errors: Vec<String> = self.mismatches_at_most_javas(listed).err().into_iter().collect();
        for (strategy, [ours, java]) in &self.moves_total {
            if ours > java {
                errors.push(format!("{strategy}: moves in all: ours {ours}, more than Java's {java}"));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    }

    /// The "follow-up rounds at most Java's", over the whole set: a group may take one
    /// round more only where the stated order explains it (or it is listed), and the set as a
    /// whole never takes more rounds than Java.
    pub fn rounds_at_most_javas(&self) -> Result<(), String> {
        let [ours, java] = self.rounds_total;
        if ours > java {
            return Err(format!("follow-up rounds in all: ours {ours}, more than Java's {java}"));
        }
        Ok(())
    }

    /// Better minus worse, summed over every strategy and metric: the set's tally.
    pub fn net(&self) -> i64 {
        self.counts.values().map(|[b, _, w]| *b as i64 - *w as i64).sum()
    }

    /// The "the tallies against Java must not get worse": the set's tally is at least
    /// `floor`, the figure the set reached when it was last changed on purpose.
    pub fn net_at_least(&self, floor: i64) -> Result<(), String> {
        let net = self.net();
        if net < floor {
            return Err(format!("tally against Java (better minus worse over the metrics): {net}, below {floor}"));
        }
        Ok(())
    }

    /// The table the parity tests print.
    pub fn table(&self, set: &str) -> String {
        let mut s = format!("{set}: ours against Java 3.9.1, scenarios better / equal / worse\n");
        for strategy in ["sticky", "cooperative-sticky"] {
            for metric in METRICS {
                if let Some([b, e, w]) = self.counts.get(&(strategy, metric)) {
                    let _ = writeln!(s, "  {strategy:<19} {metric:<25} {b:>4} / {e:>4} / {w:>4}");
                }
            }
        }
        let [held, elsewhere, unknown] = self.pending_to;
        let _ = writeln!(
            s,
            "  cooperative-sticky pending: {} withheld in first rounds, {held} end on their `to`, {elsewhere} elsewhere, {unknown} without `to`",
            held + elsewhere + unknown
        );
        let _ = writeln!(
            s,
            "  groups where Java is better on some criterion: {} by our order, {} listed known divergences",
            self.by_order, self.listed
        );
        if self.counts.keys().any(|&(_, metric)| metric == "rounds") {
            let [ours, java] = self.rounds_total;
            let _ = writeln!(
                s,
                "  cooperative-sticky follow-up rounds in all (rebalances that end on both sides): ours {ours}, Java {java}"
            );
        }
        for (strategy, [ours, java]) in &self.moves_total {
            let [our_mis, java_mis] = self.mismatches_total[strategy];
            let more = self.more_mismatches_at_equal_balance[strategy];
            let _ = writeln!(
                s,
                "  {strategy} in all: moves ours {ours}, Java {java}; rack mismatches ours {our_mis}, Java {java_mis}; groups with more mismatches than Java's at equal balance: {more}"
            );
            let [plain_ours, plain_java] = self.moves_without_trade[strategy];
            let _ = writeln!(
                s,
                "  {strategy} moves where ours is no better on balance or mismatches: ours {plain_ours}, Java {plain_java}"
            );
        }
        let _ = writeln!(s, "  tally (better minus worse over the metrics): {}", self.net());
        let _ = writeln!(s, "  checked per strategy: {:?}", self.checked);
        s
    }
}

pub fn java_sets(v: &Value) -> Sets {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(m, list)| {
            let mut set = BTreeSet::new();
            for g in list.as_array().unwrap() {
                let t = g["topic"].as_str().unwrap().to_string();
                for p in g["partitions"].as_array().unwrap() {
                    set.insert((t.clone(), p.as_i64().unwrap() as i32));
                }
            }
            (m.clone(), set)
        })
        .collect()
}

fn with_user_data(members: &[GroupMember], ud: Option<&Value>) -> Vec<GroupMember> {
    let mut out = members.to_vec();
    if let Some(ud) = ud.and_then(Value::as_object) {
        for m in &mut out {
            if let Some(v) = ud.get(&m.member_id) {
                m.subscription.user_data = v.as_str().map(|h| hex_decode(h).into());
            }
        }
    }
    out
}

/// Runs the whole set in `dir`; returns the failures and the tally.
/// Groups where Java ends better and that are not by our order must be listed in
/// `testdata/assignor/known-divergences.tsv` under the set's directory name; a listed group that
/// no longer diverges is a failure too (the list stays true).
pub fn run_set(dir: &Path) -> (Vec<String>, Tally) {
    let set = dir.file_name().unwrap().to_string_lossy().to_string();
    let known = Known::load();
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let (metadata, members) = parse_group(&doc["input"]);
        let java = &doc["java"];
        for strategy in ["range", "roundrobin"] {
            let jv = &java[strategy];
            let ours = builtin(strategy).unwrap().assign(&metadata, &members).unwrap();
            check_valid(&metadata, &members, &ours)
                .unwrap_or_else(|e| failures.push(format!("{name} {strategy}: {e}")));
            if jv.get("error").is_some() {
                continue;
            }
            let order_dependent = java["hashmap_order_dependent"][strategy]["assignment"].as_bool().unwrap_or(false);
            if order_dependent {
                continue;
            }
            let expected = java_sets(&jv["assignments"]);
            if sets(&ours) != expected {
                failures.push(format!(
                    "{name} {strategy}: differs from Java\n ours {:?}\n java {:?}",
                    sets(&ours),
                    expected
                ));
            }
            *tally.checked.entry(strategy).or_default() += 1;
        }
        for strategy in ["sticky", "cooperative-sticky"] {
            let judge = |ours: &Figures, theirs: &Figures| known.judge(&set, &name, strategy, ours, theirs);
            compare_sticky(
                &name,
                strategy,
                &metadata,
                &members,
                &java[strategy],
                &mut tally,
                &mut failures,
                &judge,
                &set,
            );
        }
    }
    for entry in known.stale(&set) {
        failures.push(format!("listed as a known divergence but no longer one: {entry}"));
    }
    if let Err(e) = tally.rounds_at_most_javas() {
        failures.push(e);
    }
    (failures, tally)
}

/// One sticky strategy on one scenario: valid, complete, balanced, and where Java's end is better
/// on some criterion, by our order or listed (see [`Known`]).
#[allow(clippy::too_many_arguments)]
fn compare_sticky(
    name: &str,
    strategy: &'static str,
    metadata: &ClusterMetadata,
    members: &[GroupMember],
    jv: &Value,
    tally: &mut Tally,
    failures: &mut Vec<String>,
    judge: &dyn Fn(&Figures, &Figures) -> Verdict,
    set: &str,
) {
    let cooperative = strategy == "cooperative-sticky";
    let input = with_user_data(members, jv.get("user_data"));
    let assignor = builtin(strategy).unwrap();
    let first = assignor.assign(metadata, &input).unwrap();
    let fail = |failures: &mut Vec<String>, e: String| failures.push(format!("{name} {strategy}: {e}"));
    let detail = std::env::var_os("KCP_PARITY_DETAIL").is_some();
    if let Err(e) = check_valid(metadata, &input, &first) {
        fail(failures, e);
        return;
    }
    if cooperative {
        if let Err(e) = check_cooperative(&input, &first) {
            fail(failures, e);
        }
    }
    if let Err(e) = check_complete(metadata, &input, &first) {
        fail(failures, e);
        return;
    }
    // Follow-up rounds (cooperative): members revoke, rejoin with their assignment.
    let mut follow_ups = 0usize;
    let mut ours = known_sets(metadata, &first);
    if cooperative {
        let mut round = first.clone();
        let mut current = input.clone();
        while !round.pending.is_empty() && follow_ups < 5 {
            follow_ups += 1;
            current = next_round(&current, &round, 1000 + follow_ups as i32);
            round = assignor.assign(metadata, &current).unwrap();
            if let Err(e) = check_valid(metadata, &current, &round)
                .and_then(|_| check_complete(metadata, &current, &round))
                .and_then(|_| check_cooperative(&current, &round))
            {
                fail(failures, format!("round {follow_ups}: {e}"));
            }
        }
        ours = known_sets(metadata, &round);
        if !round.pending.is_empty() {
            fail(failures, "no convergence in 5 rounds".into());
        }
        let end = sets(&round);
        for p in &first.pending {
            let slot = match &p.to {
                Some(to) if end.get(to).is_some_and(|s| s.contains(&(p.topic.clone(), p.partition))) => 0,
                Some(_) => 1,
                None => 2,
            };
            tally.pending_to[slot] += 1;
        }
    }
    let subs = subscribed_sets(metadata, &input);
    if let Err(e) = check_balanced(&subs, &ours) {
        fail(failures, e);
    }
    if jv.get("error").is_some() {
        // Java fails here (e.g. KAFKA-21674); ours already checked valid + complete.
        *tally.checked.entry("sticky-java-error").or_default() += 1;
        return;
    }
    let java = if cooperative {
        java_sets(&jv["rounds"].as_array().unwrap().last().unwrap()["assignments"])
    } else {
        java_sets(&jv["assignments"])
    };
    if !java_valid(metadata, &java) {
        // Java's own output is invalid (a partition twice or a nonexistent one).
        *tally.checked.entry("sticky-java-invalid").or_default() += 1;
        return;
    }
    if cooperative && jv["converged"].as_bool() == Some(false) {
        // Java still withholds partitions after the 30 rounds the tool plays: its last round
        // leaves partitions unassigned, so it has no final assignment to compare balance, racks
        // or moves with. Ours converged (checked above): only the rounds compare, ours fewer.
        let java_rounds = jv["follow_up_rounds"].as_u64().unwrap() as usize;
        tally.add(strategy, "rounds", follow_ups, java_rounds);
        if follow_ups >= java_rounds {
            fail(failures, format!("rounds: ours {follow_ups}, Java {java_rounds} (Java did not converge)"));
        }
        *tally.checked.entry("cooperative-sticky-java-unconverged").or_default() += 1;
        return;
    }
    let valid_owned = valid_claims(metadata, &input, cooperative);
    let (our_moves, java_moves) = (moved(&valid_owned, &ours), moved(&valid_owned, &java));
    let (our_mis, java_mis) = (rack_mismatches(metadata, &input, &ours), rack_mismatches(metadata, &input, &java));
    let (our_sq, java_sq) = (sum_sq(&ours), sum_sq(&java));
    if detail && (our_mis > java_mis || our_moves > java_moves) {
        eprintln!("{name} {strategy}: mis {our_mis}/{java_mis} moves {our_moves}/{java_moves} sq {our_sq}/{java_sq}\n  ours {ours:?}\n  java {java:?}\n  valid {valid_owned:?}");
    }
    let (our_spread, java_spread) = (spread(&ours, &input), spread(&java, &input));
    if our_spread > java_spread.max(1) {
        fail(failures, format!("size spread {our_spread} > Java's {java_spread}"));
    }
    let java_rounds = if cooperative { jv["follow_up_rounds"].as_u64().unwrap() as usize } else { 0 };
    let figures = [(our_mis, java_mis), (our_moves, java_moves), (our_sq, java_sq)];
    for (i, &(o, j)) in figures.iter().enumerate() {
        tally.add(strategy, METRICS[i], o, j);
    }
    tally.add_end(strategy, [our_sq, our_mis, our_moves], [java_sq, java_mis, java_moves]);
    if cooperative {
        tally.add_rounds(follow_ups, java_rounds);
    }
    let o = Figures::of(metadata, &input, &valid_owned, &ours, follow_ups);
    let j = Figures::of(metadata, &input, &valid_owned, &java, java_rounds);
    let verdict = judge(&o, &j);
    if detail && matches!(verdict, Verdict::ByOrder | Verdict::Listed) {
        eprintln!("{name} {strategy}: Java better on some criterion ({verdict:?}): ours {o:?}, Java {j:?}");
    }
    match verdict {
        Verdict::NoWorse => {}
        Verdict::ByOrder => tally.by_order += 1,
        Verdict::Listed => tally.listed += 1,
        Verdict::Unexplained(worse) => {
            failures.push(format!("{set}\t{name}\t{strategy}\t{}\tours {o:?}, Java {j:?}", worse.join(",")))
        }
    }
    *tally.checked.entry(strategy).or_default() += 1;
}

/// No partition twice, none that does not exist.
fn java_valid(metadata: &ClusterMetadata, s: &Sets) -> bool {
    let mut seen = BTreeSet::new();
    s.values().flatten().all(|(t, p)| metadata.topics.get(t).is_some_and(|i| *p < i.partitions) && seen.insert((t, p)))
}

/// Sum of squared member sizes (lower = more even).
pub fn sum_sq(s: &Sets) -> usize {
    s.values().map(|x| x.len() * x.len()).sum()
}

/// Spread (max - min) of member sizes.
fn spread(s: &Sets, members: &[GroupMember]) -> usize {
    let sizes: Vec<usize> = members.iter().map(|m| s.get(&m.member_id).map_or(0, |x| x.len())).collect();
    sizes.iter().max().unwrap_or(&0) - sizes.iter().min().unwrap_or(&0)
}

/// Partitions held by a member with a (non-empty) rack on which none of its replicas is: Java's
/// `racksMismatch`.
pub fn rack_mismatches(metadata: &ClusterMetadata, members: &[GroupMember], s: &Sets) -> usize {
    let mut n = 0;
    for m in members {
        let Some(rack) = m.subscription.rack_id.as_deref().filter(|r| !r.is_empty()) else { continue };
        for (t, p) in s.get(&m.member_id).into_iter().flatten() {
            let racks = metadata.topics.get(t).and_then(|i| i.partition_racks.get(*p as usize));
            if !racks.is_some_and(|r| r.iter().any(|x| x == rack)) {
                n += 1;
            }
        }
    }
    n
}

/// Partitions taken away from their valid owner.
pub fn moved(valid: &BTreeMap<(String, i32), String>, s: &Sets) -> usize {
    valid.iter().filter(|(tp, owner)| !s.get(*owner).is_some_and(|set| set.contains(*tp))).count()
}
