//! Go's `text/tabwriter` with left alignment and a space pad character (flags 0): text in
//! tab-terminated cells, aligned in columns. A column block is a run of adjacent lines that
//! have a cell in that column; its width is the widest cell plus `padding`, and at least
//! `min_width`. The text after a line's last tab is not part of a column.

/// The aligned text of `text` (complete lines, each ending in `\n`), as
/// `tabwriter.NewWriter(w, min_width, 0, padding, ' ', 0)` writes it.
pub fn format(text: &str, min_width: usize, padding: usize) -> String {
    let lines: Vec<Vec<&str>> = text
        .split_inclusive('\n')
        .map(|line| {
            line.strip_suffix('\n')
                .unwrap_or(line)
                .split('\t')
                .collect()
        })
        .collect();
    let mut out = String::with_capacity(text.len() * 2);
    let mut widths = Vec::new();
    block(
        &lines,
        0,
        lines.len(),
        &mut widths,
        min_width,
        padding,
        &mut out,
    );
    if !text.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    out
}

fn cell_width(cell: &str) -> usize {
    cell.chars().count()
}

/// Go's `format`: the lines `[start, end)` with `widths` fixed for the columns before.
fn block(
    lines: &[Vec<&str>],
    start: usize,
    end: usize,
    widths: &mut Vec<usize>,
    min_width: usize,
    padding: usize,
    out: &mut String,
) {
    let column = widths.len();
    let mut written = start;
    let mut this = start;
    while this < end {
        if column + 1 >= lines[this].len() {
            this += 1;
            continue;
        }
        write_lines(lines, written, this, widths, out);
        let block_start = this;
        let mut width = min_width;
        while this < end && column + 1 < lines[this].len() {
            width = width.max(cell_width(lines[this][column]) + padding);
            this += 1;
        }
        widths.push(width);
        block(lines, block_start, this, widths, min_width, padding, out);
        widths.pop();
        written = this;
    }
    write_lines(lines, written, end, widths, out);
}

fn write_lines(lines: &[Vec<&str>], start: usize, end: usize, widths: &[usize], out: &mut String) {
    for line in &lines[start..end] {
        for (j, cell) in line.iter().enumerate() {
            out.push_str(cell);
            if j + 1 < line.len()
                && let Some(width) = widths.get(j)
            {
                for _ in cell_width(cell)..*width {
                    out.push(' ');
                }
            }
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns_as_go() {
        // tabwriter.NewWriter(&b, 8, 0, 1, ' ', 0) over the same input.
        let text = "PriorityLevelName,\tActiveQueues,\tIsIdle\nexempt,\t0,\ttrue\ncatch-all,\t12,\tfalse\n";
        assert_eq!(
            format(text, 8, 1),
            "PriorityLevelName, ActiveQueues, IsIdle\n\
             exempt,            0,            true\n\
             catch-all,         12,           false\n"
        );
        // Short cells get the minimum width.
        assert_eq!(format("a\tb\nc\td\n", 8, 1), "a       b\nc       d\n");
        // A line without the column ends the block.
        assert_eq!(
            format("aaaaaaaaaa\tb\nx\nc\td\n", 8, 1),
            "aaaaaaaaaa b\nx\nc       d\n"
        );
    }
}
