//! Element order of merged lists (`normalizeElementOrder` and friends in upstream's
//! strategicpatch), upstream's error texts, and a port of Go's `sort.SliceStable`, whose
//! exact moves matter because upstream's comparator is not a strict order.

use serde_json::{Map, Value};

use super::PatchError;
use crate::golang::fmt::{GoKind, sprint_type_of, sprint_v};

const MAP_TYPE: &str = "map[string]interface {}";
pub(super) const DIRECTIVE: &str = "$patch";
static NIL: Value = Value::Null;

/// `mergepatch.ErrBadArgType(expected, actual)`.
pub(super) fn bad_arg_type(expected: &str, actual: &Value) -> PatchError {
    PatchError::Other(format!(
        "expected a {expected}, but received a {}",
        sprint_type_of(actual)
    ))
}

pub(super) fn bad_map(actual: &Value) -> PatchError {
    bad_arg_type(MAP_TYPE, actual)
}

/// `mergepatch.ErrNoMergeKey(m, k)`.
pub(super) fn no_merge_key(m: &Map<String, Value>, key: &str) -> PatchError {
    PatchError::Other(format!(
        "map: {} does not contain declared merge key: {key}",
        sprint_v(&Value::Object(m.clone()))
    ))
}

/// Go's `==` on two `interface{}` values holding scalars: same dynamic type and value.
/// Maps and slices (where Go would panic) compare unequal.
pub(super) fn go_eq(a: &Value, b: &Value) -> bool {
    let (ka, kb) = (GoKind::of(a), GoKind::of(b));
    if ka != kb {
        return false;
    }
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => match ka {
            GoKind::Int => x.as_i64() == y.as_i64(),
            _ => x.as_f64() == y.as_f64(),
        },
        _ => false,
    }
}

/// The value `index` compares: the merge key's value for maps, the item itself otherwise.
fn key_of<'a>(item: &'a Value, merge_key: &str, kind: GoKind) -> &'a Value {
    if kind == GoKind::Map {
        item.as_object()
            .and_then(|m| m.get(merge_key))
            .unwrap_or(&NIL)
    } else {
        item
    }
}

fn index(list: &[Value], item: &Value, merge_key: &str, kind: GoKind) -> Option<usize> {
    let wanted = key_of(item, merge_key, kind);
    list.iter()
        .position(|v| go_eq(wanted, key_of(v, merge_key, kind)))
}

fn validate_merge_key_in_lists(merge_key: &str, lists: &[&[Value]]) -> Result<(), PatchError> {
    for item in lists.iter().flat_map(|l| l.iter()) {
        let m = item.as_object().ok_or_else(|| bad_map(item))?;
        if !m.contains_key(merge_key) {
            return Err(no_merge_key(m, merge_key));
        }
    }
    Ok(())
}

/// Splits a list of maps into the items without and with `$patch: delete`.
pub(super) fn extract_to_delete_items(
    list: &[Value],
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let (mut keep, mut delete) = (Vec::new(), Vec::new());
    for v in list {
        let m = v.as_object().ok_or_else(|| bad_map(v))?;
        if m.get(DIRECTIVE).is_some_and(|d| d == "delete") {
            delete.push(v.clone());
        } else {
            keep.push(v.clone());
        }
    }
    Ok((keep, delete))
}

/// `normalizeSliceOrder`: sorts `to_sort` by the positions of its items in `order`.
fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: GoKind,
) -> Result<Vec<Value>, PatchError> {
    let (to_sort, to_delete) = if kind == GoKind::Map {
        validate_merge_key_in_lists(merge_key, &[&to_sort, order])?;
        extract_to_delete_items(&to_sort)?
    } else {
        (to_sort, Vec::new())
    };
    let mut keyed: Vec<(Option<usize>, Value)> = to_sort
        .into_iter()
        .map(|v| (index(order, &v, merge_key, kind), v))
        .collect();
    go_stable_sort(&mut keyed, |a, b| match (a.0, b.0) {
        (Some(x), Some(y)) => x < y,
        _ => true,
    });
    let mut sorted: Vec<Value> = keyed.into_iter().map(|(_, v)| v).collect();
    sorted.extend(to_delete);
    Ok(sorted)
}

/// `normalizeElementOrder`: orders patch items by `patch_order` and server-only items by
/// `server_order`, then interleaves them.
pub(super) fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: GoKind,
) -> Result<Vec<Value>, PatchError> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, kind)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, kind)?;
    Ok(merge_sorted_slice(
        server_only,
        patch,
        server_order,
        merge_key,
        kind,
    ))
}

/// `mergeSortedSlice`: a server-only item goes before a patch item only when both are in
/// the live list and it came first there.
fn merge_sorted_slice(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    kind: GoKind,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut left, mut right) = (left.into_iter().peekable(), right.into_iter().peekable());
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => matches!(
                (index(server_order, l, merge_key, kind), index(server_order, r, merge_key, kind)),
                (Some(li), Some(ri)) if li < ri
            ),
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out
}

/// `partitionPrimitivesByPresentInList` / `partitionMapsByPresentInList`: the items of
/// `merged` present in `by`, and the rest.
pub(super) fn partition(
    merged: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for v in merged {
        let found = if merge_key.is_empty() {
            by.iter().any(|b| go_eq(b, &v))
        } else {
            let m = v.as_object().ok_or_else(|| bad_map(&v))?;
            let key_value = m.get(merge_key).ok_or_else(|| no_merge_key(m, merge_key))?;
            find_by_key(by, merge_key, key_value)?.is_some()
        };
        if found {
            inside.push(v);
        } else {
            outside.push(v);
        }
    }
    Ok((inside, outside))
}

/// `findMapInSliceBasedOnKeyValue`: the index of the first map whose `key` equals `value`.
pub(super) fn find_by_key(
    list: &[Value],
    key: &str,
    value: &Value,
) -> Result<Option<usize>, PatchError> {
    for (i, v) in list.iter().enumerate() {
        let m = v
            .as_object()
            .ok_or_else(|| PatchError::Other(format!("value for key {i} is not a map.")))?;
        if m.get(key).is_some_and(|x| go_eq(x, value)) {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

fn merge_key_value_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, PatchError> {
    if merge_key.is_empty() {
        return Ok(go_eq(left, right));
    }
    let l = left.as_object().ok_or_else(|| bad_map(left))?;
    let r = right.as_object().ok_or_else(|| bad_map(right))?;
    let lv = l.get(merge_key).ok_or_else(|| no_merge_key(l, merge_key))?;
    let rv = r.get(merge_key).ok_or_else(|| no_merge_key(r, merge_key))?;
    Ok(go_eq(lv, rv))
}

/// `validatePatchWithSetOrderList`: the patch list's items (deletions aside) must appear in
/// `$setElementOrder` in the same relative order.
pub(super) fn validate_patch_with_set_order_list(
    patch_list: &[Value],
    set_order: &[Value],
    merge_key: &str,
) -> Result<(), PatchError> {
    if set_order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let keep = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        extract_to_delete_items(patch_list)?.0
    };
    let (mut pi, mut si) = (0, 0);
    while pi < keep.len() && si < set_order.len() {
        if keep[pi]
            .as_object()
            .is_some_and(|m| m.contains_key(DIRECTIVE))
        {
            pi += 1;
            continue;
        }
        if merge_key_value_equal(&keep[pi], &set_order[si], merge_key)? {
            pi += 1;
        }
        si += 1;
    }
    if pi < keep.len() && si >= set_order.len() {
        return Err(PatchError::Other(format!(
            "The order in patch list:\n{}\n doesn't match $setElementOrder list:\n{}\n",
            sprint_v(&Value::Array(patch_list.to_vec())),
            sprint_v(&Value::Array(set_order.to_vec()))
        )));
    }
    Ok(())
}

/// `sliceElementType`: the one Go kind of every element of `lists`.
pub(super) fn slice_element_type(lists: &[&[Value]]) -> Result<GoKind, PatchError> {
    let mut kind = None;
    for v in lists.iter().flat_map(|l| l.iter()) {
        let k = GoKind::of(v);
        match kind {
            None if k == GoKind::Slice => {
                return Err(PatchError::Unprocessable(
                    "lists of lists are not supported".to_owned(),
                ));
            }
            None => kind = Some(k),
            Some(prev) if prev != k => {
                let all = Value::Array(lists.iter().map(|l| Value::Array(l.to_vec())).collect());
                return Err(PatchError::Other(format!(
                    "list element types are not identical: {}",
                    sprint_v(&all)
                )));
            }
            Some(_) => {}
        }
    }
    kind.ok_or_else(|| PatchError::Other("no elements in any of the given slices".to_owned()))
}

/// `deduplicateScalars`, including its habit of moving the last element into the place
/// of a duplicate (the order is normalized afterwards).
pub(super) fn deduplicate_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut length = s.len() as isize - 1;
    let mut i = 0isize;
    while i < length {
        let mut j = i + 1;
        while j <= length {
            if go_eq(&s[i as usize], &s[j as usize]) {
                s[j as usize] = s[length as usize].clone();
                s.truncate(length as usize);
                length -= 1;
                j -= 1;
            }
            j += 1;
        }
        i += 1;
    }
    s
}

/// Go's `sort.SliceStable` (insertion sort in blocks of 20, then `symMerge`), move for
/// move, so that an inconsistent `less` gives upstream's result.
pub(super) fn go_stable_sort<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    let mut block = 20;
    let (mut a, mut b) = (0, block);
    while b <= n {
        insertion_sort(data, a, b, &less);
        a = b;
        b += block;
    }
    insertion_sort(data, a, n, &less);
    while block < n {
        let (mut a, mut b) = (0, 2 * block);
        while b <= n {
            sym_merge(data, a, a + block, b, &less);
            a = b;
            b += 2 * block;
        }
        if a + block < n {
            sym_merge(data, a, a + block, n, &less);
        }
        block *= 2;
    }
}

fn insertion_sort<T>(data: &mut [T], a: usize, b: usize, less: &impl Fn(&T, &T) -> bool) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && less(&data[j], &data[j - 1]) {
            data.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sym_merge<T>(data: &mut [T], a: usize, m: usize, b: usize, less: &impl Fn(&T, &T) -> bool) {
    if m - a == 1 {
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = (i + j) / 2;
            if less(&data[h], &data[a]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        for k in a..i.saturating_sub(1) {
            data.swap(k, k + 1);
        }
        return;
    }
    if b - m == 1 {
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = (i + j) / 2;
            if !less(&data[m], &data[h]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        let mut k = m;
        while k > i {
            data.swap(k, k - 1);
            k -= 1;
        }
        return;
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !less(&data[p - c], &data[c]) {
            start = c + 1;
        } else {
            r = c;
        }
    }
    let end = n - start;
    if start < m && m < end {
        rotate(data, start, m, end);
    }
    if a < start && start < mid {
        sym_merge(data, a, start, mid, less);
    }
    if mid < end && end < b {
        sym_merge(data, mid, end, b, less);
    }
}

fn rotate<T>(data: &mut [T], a: usize, m: usize, b: usize) {
    let (mut i, mut j) = (m - a, b - m);
    while i != j {
        if i > j {
            swap_range(data, m - i, m, j);
            i -= j;
        } else {
            swap_range(data, m - i, m + j - i, i);
            j -= i;
        }
    }
    swap_range(data, m - i, m, i);
}

fn swap_range<T>(data: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        data.swap(a + i, b + i);
    }
}
