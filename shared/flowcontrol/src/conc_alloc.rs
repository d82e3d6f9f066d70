//! The allocation of concurrency among priority levels: a port of upstream's
//! `k8s.io/apiserver/pkg/util/flowcontrol/conc_alloc.go` (`computeConcurrencyAllocation`).
//!
//! Given classes with a lower bound, an upper bound and a target each, and a total that the
//! allocations must add up to, [`compute_concurrency_allocation`] finds the one "fair
//! proportion" such that each class gets its target times that proportion, clamped into its
//! bounds, and the clamped values add up to the total.

/// Targets below this are raised to it, so that no target divides by zero.
pub const MIN_TARGET: f64 = 0.001;

/// Slack for the floating-point comparisons of sums.
const EPSILON: f64 = 0.0000001;

/// One class to allocate to. The caller must have `target >= lower_bound >= 0` and
/// `upper_bound >= lower_bound`; violations are reported as errors.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AllocProblemItem {
    pub lower_bound: f64,
    pub upper_bound: f64,
    pub target: f64,
}

/// A class with its target kept away from zero and its bounds divided by that target.
#[derive(Clone, Copy, Debug)]
struct RelativeAllocItem {
    target: f64,
    relative_lower_bound: f64,
    relative_upper_bound: f64,
}

/// All the classes' relative bounds, in ascending order. An entry of `ascending` is a packed
/// index: `2*n` stands for the lower bound of item `n`, `2*n + 1` for its upper bound.
struct RelativeAllocProblem {
    items: Vec<RelativeAllocItem>,
    ascending: Vec<usize>,
}

impl RelativeAllocProblem {
    fn new(items: Vec<RelativeAllocItem>) -> Self {
        let mut problem = RelativeAllocProblem {
            ascending: (0..items.len() * 2).collect(),
            items,
        };
        let mut ascending = std::mem::take(&mut problem.ascending);
        // A total order, so that NaN bounds cannot upset the sort; the order among equal bounds
        // does not matter to the search below.
        ascending.sort_by(|&a, &b| problem.bound(a).total_cmp(&problem.bound(b)));
        problem.ascending = ascending;
        problem
    }

    /// The relative bound that a packed index stands for.
    fn bound(&self, packed: usize) -> f64 {
        match self.items.get(packed / 2) {
            Some(item) if packed.is_multiple_of(2) => item.relative_lower_bound,
            Some(item) => item.relative_upper_bound,
            None => f64::NAN,
        }
    }

    /// The `idx`-th smallest bound: its value, its item's target and whether it is a lower
    /// bound.
    fn decode(&self, idx: usize) -> Option<(f64, f64, bool)> {
        let packed = *self.ascending.get(idx)?;
        let item = self.items.get(packed / 2)?;
        let lower = packed.is_multiple_of(2);
        let bound = if lower {
            item.relative_lower_bound
        } else {
            item.relative_upper_bound
        };
        Some((bound, item.target, lower))
    }
}

/// Go's `math.Min`: NaN wins.
fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// Go's `math.Max`: NaN wins.
fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// The smallest and the largest of the numbers noted.
struct MinMax {
    min: f64,
    max: f64,
}

impl MinMax {
    fn new() -> Self {
        MinMax {
            min: f64::from(f32::MAX),
            max: 0.0,
        }
    }

    fn note(&mut self, x: f64) {
        self.min = go_min(self.min, x);
        self.max = go_max(self.max, x);
    }
}

/// A float as Go's `%v` prints it, so that the error texts read as upstream's.
pub(crate) fn go_float(x: f64) -> String {
    kas_apimachinery::golang::strconv::format_float(x, b'g', 64)
}

/// Computes the allocations of `required_sum` among `classes`, and the fair proportion
/// `fair_prop`, such that the allocations add up to `required_sum` and each allocation is
/// within its class's bounds and is either `fair_prop * target`, or the lower bound when that
/// is above `fair_prop * target`, or the upper bound when that is below it. Targets under
/// [`MIN_TARGET`] count as [`MIN_TARGET`].
///
/// The error is upstream's text: a negative sum, a class with inconsistent bounds or target,
/// or bounds that cannot add up to `required_sum`.
pub fn compute_concurrency_allocation(
    required_sum: i32,
    classes: &[AllocProblemItem],
) -> Result<(Vec<f64>, f64), String> {
    if required_sum < 0 {
        return Err("negative sums are not supported".to_owned());
    }
    let required_sum_f = f64::from(required_sum);
    let mut low_sum = 0.0;
    let mut high_sum = 0.0;
    let mut target_sum = 0.0;
    let mut ub_range = MinMax::new();
    let mut lb_range = MinMax::new();
    let mut relative_items = Vec::with_capacity(classes.len());
    for (idx, item) in classes.iter().enumerate() {
        if item.lower_bound < 0.0 {
            return Err(format!(
                "lower bound {idx} is {} but negative lower bounds are not allowed",
                go_float(item.lower_bound)
            ));
        }
        if item.target < item.lower_bound {
            return Err(format!(
                "target {idx} is {}, which is below its lower bound of {}",
                go_float(item.target),
                go_float(item.lower_bound)
            ));
        }
        if item.upper_bound < item.lower_bound {
            return Err(format!(
                "upper bound {idx} is {} but should not be less than the lower bound {}",
                go_float(item.upper_bound),
                go_float(item.lower_bound)
            ));
        }
        let target = if item.target < MIN_TARGET {
            MIN_TARGET
        } else {
            item.target
        };
        low_sum += item.lower_bound;
        high_sum += item.upper_bound;
        target_sum += target;
        let relative = RelativeAllocItem {
            target,
            relative_lower_bound: item.lower_bound / target,
            relative_upper_bound: item.upper_bound / target,
        };
        ub_range.note(relative.relative_upper_bound);
        lb_range.note(relative.relative_lower_bound);
        relative_items.push(relative);
    }
    if lb_range.max > 1.0 {
        return Err(format!(
            "lbRange.max-1={}, which is impossible because lbRange.max can not be greater than 1",
            go_float(lb_range.max - 1.0)
        ));
    }
    if low_sum - required_sum_f > EPSILON {
        return Err(format!(
            "lower bounds sum to {}, which is higher than the required sum of {required_sum}",
            go_float(low_sum)
        ));
    }
    if required_sum_f - high_sum > EPSILON {
        return Err(format!(
            "upper bounds sum to {}, which is lower than the required sum of {required_sum}",
            go_float(high_sum)
        ));
    }
    if required_sum == 0 {
        return Ok((vec![0.0; classes.len()], 0.0));
    }
    if low_sum - required_sum_f > -EPSILON {
        // The lower bounds use up the whole sum.
        let allocs = classes.iter().map(|item| item.lower_bound).collect();
        return Ok((allocs, lb_range.min));
    }
    if required_sum_f - high_sum > -EPSILON {
        // The upper bounds are needed in full.
        let allocs = classes.iter().map(|item| item.upper_bound).collect();
        return Ok((allocs, ub_range.max));
    }
    // The answer is one fair proportion in [lb_range.min, ub_range.max]. First try the one
    // that no bound constrains.
    let mut fair_prop = required_sum_f / target_sum;
    if lb_range.max <= fair_prop && fair_prop <= ub_range.min {
        let allocs = relative_items
            .iter()
            .map(|item| item.target * fair_prop)
            .collect();
        return Ok((allocs, fair_prop));
    }
    // Some bounds matter: sweep the fair proportion upwards from lb_range.min through the
    // sorted bounds. Between two consecutive bounds, the classes that are "sensitive" (past
    // their lower bound and not yet at their upper one) grow in proportion to their targets;
    // `sum_so_far` is what the allocations add up to at the current `fair_prop`.
    let problem = RelativeAllocProblem::new(relative_items);
    let mut sum_so_far = low_sum;
    fair_prop = lb_range.min;
    let mut sensitive_target_sum = 0.0;
    let mut delta_sensitive_target_sum = 0.0;
    let mut num_sensitive_classes: i64 = 0;
    let mut delta_sensitive_classes: i64 = 0;
    let mut next_idx = 0;
    while sum_so_far < required_sum_f {
        // Take in every bound equal to the current fair_prop; stop at the first one above it.
        let next_bound = loop {
            sensitive_target_sum += delta_sensitive_target_sum;
            num_sensitive_classes += delta_sensitive_classes;
            let Some((bound, target, lower)) = problem.decode(next_idx) else {
                return Err(
                    "impossible: ran out of bounds to consider in bound-constrained problem"
                        .to_owned(),
                );
            };
            if lower {
                delta_sensitive_classes = 1;
                delta_sensitive_target_sum = target;
            } else {
                delta_sensitive_classes = -1;
                delta_sensitive_target_sum = -target;
            }
            next_idx += 1;
            if bound > fair_prop {
                break bound;
            }
        };
        if num_sensitive_classes == 0 {
            // Nothing changes until the next bound.
            fair_prop = next_bound;
            continue;
        }
        // Does the solution come before the next bound?
        let next_prop = fair_prop + (required_sum_f - sum_so_far) / sensitive_target_sum;
        if next_prop <= next_bound {
            fair_prop = next_prop;
            break;
        }
        sum_so_far += (next_bound - fair_prop) * sensitive_target_sum;
        fair_prop = next_bound;
    }
    let allocs = classes
        .iter()
        .zip(&problem.items)
        .map(|(item, relative)| {
            go_max(
                item.lower_bound,
                go_min(item.upper_bound, fair_prop * relative.target),
            )
        })
        .collect();
    Ok((allocs, fair_prop))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slack for floating-point imprecision.
    const FP_SLACK: f64 = 1e-10;

    /// A small deterministic generator (SplitMix64), standing in for Go's seeded `math/rand`.
    struct Rng(u64);

    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// Uniform in [0, 1).
        fn float64(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
        }

        /// Uniform in [0, n); n > 0.
        fn intn(&mut self, n: usize) -> usize {
            (self.next_u64() % n as u64) as usize
        }
    }

    fn rel_diff(a: f64, b: f64) -> f64 {
        let den = a.abs().max(b.abs());
        if den == 0.0 { 0.0 } else { (a - b).abs() / den }
    }

    /// Calls `consume` n times with the indices [0, n) and amounts that add up to x.
    fn partition(rng: &mut Rng, n: usize, x: f64, mut consume: impl FnMut(&mut Rng, usize, f64)) {
        if n == 0 {
            return;
        }
        let mut divs: Vec<f64> = (0..n - 1).map(|_| rng.float64()).collect();
        divs.sort_by(f64::total_cmp);
        let mut last = 0.0;
        for (idx, div) in divs.into_iter().enumerate() {
            consume(rng, idx, (div - last) * x);
            last = div;
        }
        consume(rng, n - 1, (1.0 - last) * x);
    }

    /// One random problem, checked against the properties the answer must have; whether it
    /// had a solution.
    fn one_random_case(rng: &mut Rng) -> bool {
        let mut prob_len = [0, 1, 2, 3, 4, 6, 9][rng.intn(7)];
        let mut classes = vec![AllocProblemItem::default(); prob_len];
        let mut low_sum = 0.0;
        let mut high_sum = 0.0;
        let mut required_sum: i32 = 0;
        let mut required_sum_f = 0.0;
        let mut style = "empty";
        if prob_len > 0 {
            match rng.intn(20) {
                0 => {
                    style = "bound from below";
                    required_sum = rng.intn(prob_len * 3) as i32;
                    required_sum_f = f64::from(required_sum);
                    partition(rng, prob_len, required_sum_f, |rng, j, x| {
                        classes[j].lower_bound = x;
                        classes[j].target = x + 2.0 * rng.float64();
                        classes[j].upper_bound = x + 3.0 * rng.float64();
                        low_sum += classes[j].lower_bound;
                        high_sum += classes[j].upper_bound;
                    });
                }
                1 => {
                    style = "bound from above";
                    required_sum = rng.intn(prob_len * 3) as i32 + 1;
                    required_sum_f = f64::from(required_sum);
                    partition(rng, prob_len, required_sum_f, |rng, j, x| {
                        classes[j].upper_bound = x;
                        classes[j].lower_bound = x * 0f64.max(1.25 * rng.float64() - 1.0);
                        classes[j].target = classes[j].lower_bound + rng.float64();
                        low_sum += classes[j].lower_bound;
                        high_sum += classes[j].upper_bound;
                    });
                }
                _ => {
                    style = "not-set-by-bounds";
                    for class in classes.iter_mut() {
                        let x = 0f64.max(rng.float64() * 5.0 - 1.0);
                        class.lower_bound = x;
                        class.target = x + 2.0 * rng.float64();
                        class.upper_bound = x + 3.0 * rng.float64();
                        low_sum += class.lower_bound;
                        high_sum += class.upper_bound;
                    }
                    required_sum_f = (low_sum + (high_sum - low_sum) * rng.float64()).round();
                    required_sum = required_sum_f as i32;
                }
            }
        }
        while rng.float64() < 0.25 {
            // A class with a target of zero.
            classes.push(AllocProblemItem {
                target: 0.0,
                lower_bound: 0.0,
                upper_bound: rng.float64() + 0.00001,
            });
            high_sum += classes[prob_len].upper_bound;
            if prob_len > 1 {
                let m = rng.intn(prob_len);
                classes.swap(m, prob_len);
            }
            prob_len = classes.len();
        }
        let result = compute_concurrency_allocation(required_sum, &classes);
        let expect_err =
            low_sum - required_sum_f > FP_SLACK || required_sum_f - high_sum > FP_SLACK;
        let (allocs, fair_prop) = match result {
            Err(err) => {
                assert!(
                    expect_err,
                    "requiredSum={required_sum}, {style} classes={classes:?}: unexpected error {err}"
                );
                return false;
            }
            Ok(answer) => answer,
        };
        assert!(
            !expect_err,
            "requiredSum={required_sum}, {style} classes={classes:?}: expected an error, got {allocs:?}, {fair_prop}"
        );
        assert_eq!(allocs.len(), classes.len());
        let actual_sum: f64 = allocs.iter().sum();
        assert!(
            rel_diff(required_sum_f, actual_sum) <= FP_SLACK,
            "requiredSum={required_sum}, {style} classes={classes:?}: {allocs:?}, {fair_prop} sums to {actual_sum}"
        );
        for (idx, (item, &got)) in classes.iter().zip(&allocs).enumerate() {
            let alloc = fair_prop * item.target.max(MIN_TARGET);
            if alloc <= item.lower_bound {
                assert_eq!(
                    got, item.lower_bound,
                    "requiredSum={required_sum}, {style} classes={classes:?}: {allocs:?}, {fair_prop}: item {idx} should be its lower bound"
                );
            } else if alloc >= item.upper_bound {
                assert_eq!(
                    got, item.upper_bound,
                    "requiredSum={required_sum}, {style} classes={classes:?}: {allocs:?}, {fair_prop}: item {idx} should be its upper bound"
                );
            } else {
                assert!(
                    rel_diff(alloc, got) <= FP_SLACK,
                    "requiredSum={required_sum}, {style} classes={classes:?}: {allocs:?}, {fair_prop}: item {idx} got {got}, should be {alloc}"
                );
            }
        }
        true
    }

    #[test]
    fn random_problems() {
        let mut rng = Rng(1_234_567_890);
        let solved = (0..10_000).filter(|_| one_random_case(&mut rng)).count();
        // Most problems have a solution; the rest must fail as expected.
        assert!(solved > 5_000, "only {solved} solved");
    }

    fn item(lower_bound: f64, target: f64, upper_bound: f64) -> AllocProblemItem {
        AllocProblemItem {
            lower_bound,
            upper_bound,
            target,
        }
    }

    #[test]
    fn errors_read_as_upstream() {
        let cases: &[(i32, Vec<AllocProblemItem>, &str)] = &[
            (-1, vec![], "negative sums are not supported"),
            (
                1,
                vec![item(0.0, 1.0, 2.0), item(-0.5, 1.0, 2.0)],
                "lower bound 1 is -0.5 but negative lower bounds are not allowed",
            ),
            (
                1,
                vec![item(2.0, 1.5, 3.0)],
                "target 0 is 1.5, which is below its lower bound of 2",
            ),
            (
                1,
                vec![item(2.0, 3.0, 1.0)],
                "upper bound 0 is 1 but should not be less than the lower bound 2",
            ),
            (
                3,
                vec![item(2.0, 2.0, 2.0), item(2.0, 2.0, 2.0)],
                "lower bounds sum to 4, which is higher than the required sum of 3",
            ),
            (
                5,
                vec![item(0.0, 1.0, 1.25), item(0.0, 1.0, 2.5)],
                "upper bounds sum to 3.75, which is lower than the required sum of 5",
            ),
        ];
        for (required_sum, classes, want) in cases {
            assert_eq!(
                compute_concurrency_allocation(*required_sum, classes),
                Err((*want).to_owned()),
                "{required_sum} {classes:?}"
            );
        }
    }

    #[test]
    fn trivial_and_tight_cases() {
        // Nothing to allocate.
        assert_eq!(
            compute_concurrency_allocation(0, &[item(0.0, 1.0, 5.0), item(0.0, 2.0, 5.0)]),
            Ok((vec![0.0, 0.0], 0.0))
        );
        assert_eq!(compute_concurrency_allocation(0, &[]), Ok((vec![], 0.0)));
        // The lower bounds take the whole sum; fair_prop is the smallest relative lower bound.
        assert_eq!(
            compute_concurrency_allocation(3, &[item(1.0, 2.0, 5.0), item(2.0, 2.0, 5.0)]),
            Ok((vec![1.0, 2.0], 0.5))
        );
        // The upper bounds are needed in full; fair_prop is the largest relative upper bound.
        assert_eq!(
            compute_concurrency_allocation(6, &[item(0.0, 2.0, 2.0), item(0.0, 1.0, 4.0)]),
            Ok((vec![2.0, 4.0], 4.0))
        );
        // No bound matters: proportional to the targets.
        assert_eq!(
            compute_concurrency_allocation(6, &[item(0.0, 1.0, 10.0), item(0.0, 2.0, 10.0)]),
            Ok((vec![2.0, 4.0], 2.0))
        );
        // A tiny target counts as MIN_TARGET.
        let (allocs, fair_prop) =
            compute_concurrency_allocation(1, &[item(0.0, 0.0, 10.0), item(0.0, 1.0, 10.0)])
                .unwrap_or_default();
        assert!((fair_prop - 1.0 / 1.001).abs() < 1e-12, "{fair_prop}");
        assert!(
            (allocs.iter().sum::<f64>() - 1.0).abs() < 1e-12,
            "{allocs:?}"
        );
    }

    #[test]
    fn bounds_constrain_the_fair_proportion() {
        // Item 0 is capped at 1; the rest is shared by the others in proportion to targets.
        let (allocs, fair_prop) = compute_concurrency_allocation(
            10,
            &[
                item(0.0, 5.0, 1.0),
                item(0.0, 1.0, 100.0),
                item(0.0, 2.0, 100.0),
            ],
        )
        .unwrap_or_default();
        assert!((fair_prop - 3.0).abs() < 1e-12, "{fair_prop}");
        assert_eq!(allocs.len(), 3);
        assert!((allocs[0] - 1.0).abs() < 1e-12);
        assert!((allocs[1] - 3.0).abs() < 1e-12);
        assert!((allocs[2] - 6.0).abs() < 1e-12);
        // Item 0 is held up by its lower bound.
        let (allocs, fair_prop) =
            compute_concurrency_allocation(6, &[item(4.0, 4.0, 10.0), item(0.0, 4.0, 10.0)])
                .unwrap_or_default();
        assert!((fair_prop - 0.5).abs() < 1e-12, "{fair_prop}");
        assert_eq!(allocs, vec![4.0, 2.0]);
    }

    #[test]
    fn odd_inputs_do_not_panic() {
        let odd = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 1e300, 0.0];
        for &a in &odd {
            for &b in &odd {
                for &c in &odd {
                    for sum in [0, 1, 7, i32::MAX] {
                        let _ = compute_concurrency_allocation(
                            sum,
                            &[item(a, b, c), item(0.0, 1.0, 2.0), item(c, a, b)],
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn go_float_formats_as_go() {
        let cases = [
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (-0.5, "-0.5"),
            (3.75, "3.75"),
            (123_456.0, "123456"),
            (1_000_000.0, "1e+06"),
            (1_234_567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.000_015, "1.5e-05"),
            (1e300, "1e+300"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "NaN"),
        ];
        for (x, want) in cases {
            assert_eq!(go_float(x), want, "{x}");
        }
    }
}
