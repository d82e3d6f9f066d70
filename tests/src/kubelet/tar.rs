//! Just enough of the ustar format for `kubectl cp`: regular files written and read.

const BLOCK: usize = 512;

/// An archive of `entries` (name, content), with the two zero blocks that end it.
pub fn write(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, content) in entries {
        let mut head = [0u8; BLOCK];
        let name = name.as_bytes();
        head[..name.len().min(100)].copy_from_slice(&name[..name.len().min(100)]);
        head[100..108].copy_from_slice(b"0000644\0");
        head[108..116].copy_from_slice(b"0000000\0");
        head[116..124].copy_from_slice(b"0000000\0");
        head[124..136].copy_from_slice(format!("{:011o}\0", content.len()).as_bytes());
        head[136..148].copy_from_slice(b"00000000000\0");
        head[148..156].copy_from_slice(b"        ");
        head[156] = b'0';
        head[257..263].copy_from_slice(b"ustar\0");
        head[263..265].copy_from_slice(b"00");
        let sum: u32 = head.iter().map(|b| u32::from(*b)).sum();
        head[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        out.extend_from_slice(&head);
        out.extend_from_slice(content);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
    }
    out.resize(out.len() + 2 * BLOCK, 0);
    out
}

/// The regular files of an archive.
pub fn read(archive: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut at = 0;
    while at + BLOCK <= archive.len() {
        let head = &archive[at..at + BLOCK];
        if head.iter().all(|b| *b == 0) {
            break;
        }
        let text = |range: std::ops::Range<usize>| {
            String::from_utf8_lossy(&head[range])
                .trim_matches(|c: char| c == '\0' || c == ' ')
                .to_owned()
        };
        let name = text(0..100);
        let size = usize::from_str_radix(&text(124..136), 8).unwrap_or(0);
        let start = at + BLOCK;
        let end = (start + size).min(archive.len());
        if matches!(head[156], b'0' | 0) {
            files.push((name, archive[start..end].to_vec()));
        }
        at = start + size.div_ceil(BLOCK) * BLOCK;
    }
    files
}

#[cfg(test)]
mod tests {
    #[test]
    fn archives_round_trip() {
        let files = vec![("tmp/a.txt".to_owned(), b"hello\n".to_vec())];
        assert_eq!(super::read(&super::write(&files)), files);
    }
}
