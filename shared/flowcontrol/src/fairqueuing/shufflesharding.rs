//! Shuffle sharding (upstream's `k8s.io/apiserver/pkg/util/shufflesharding`): a hash value
//! deals a hand of distinct cards (queue indices) from a deck, so that flows that collide
//! on one queue rarely collide on all of their queues.

/// The most bits of the hash value a deal may consume (upstream's `MaxHashBits`): using all
/// 64 would make the last card's distribution uneven up to 2:3; 60 keeps it within 32:33.
pub const MAX_HASH_BITS: u32 = 60;

/// The largest hand a deal can produce within `MAX_HASH_BITS` (a deck of at least 2).
const MAX_HAND_SIZE: usize = 60;

/// A quick, slightly conservative estimate of the bits of hash value a deal of `hand_size`
/// cards from `deck_size` consumes (upstream's `RequiredEntropyBits`); meaningful for
/// `1 <= hand_size <= deck_size <= 1 << 26`.
pub fn required_entropy_bits(deck_size: usize, hand_size: usize) -> u32 {
    let bits = ((deck_size as f64).log2() * hand_size as f64).ceil();
    if bits.is_finite() && bits > 0.0 {
        bits as u32
    } else {
        0
    }
}

/// Deals hands of `hand_size` distinct cards from a deck of `deck_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dealer {
    deck_size: usize,
    hand_size: usize,
}

impl Dealer {
    /// Validates the sizes as upstream's `NewDealer` does, with its error texts.
    pub fn new(deck_size: usize, hand_size: usize) -> Result<Dealer, String> {
        if deck_size == 0 || hand_size == 0 {
            return Err(format!(
                "deckSize {deck_size} or handSize {hand_size} is not positive"
            ));
        }
        if hand_size > deck_size {
            return Err(format!(
                "handSize {hand_size} is greater than deckSize {deck_size}"
            ));
        }
        if deck_size > 1 << 26 {
            return Err(format!("deckSize {deck_size} is impractically large"));
        }
        if required_entropy_bits(deck_size, hand_size) > MAX_HASH_BITS {
            return Err(format!(
                "required entropy bits of deckSize {deck_size} and handSize {hand_size} is greater than {MAX_HASH_BITS}"
            ));
        }
        Ok(Dealer {
            deck_size,
            hand_size,
        })
    }

    pub fn deck_size(&self) -> usize {
        self.deck_size
    }

    pub fn hand_size(&self) -> usize {
        self.hand_size
    }

    /// Shuffles and deals a hand using `hash` as the entropy, calling `pick` for each card
    /// (in `0..deck_size`) in the order dealt.
    pub fn deal(&self, mut hash: u64, mut pick: impl FnMut(usize)) {
        let mut remainders = [0usize; MAX_HAND_SIZE];
        let hand_size = self.hand_size.min(MAX_HAND_SIZE);
        for (i, slot) in remainders.iter_mut().take(hand_size).enumerate() {
            let divisor = (self.deck_size.saturating_sub(i)).max(1) as u64;
            let next = hash / divisor;
            *slot = (hash - divisor * next) as usize;
            hash = next;
        }
        for i in 0..hand_size {
            let mut card = remainders[i];
            for j in (1..=i).rev() {
                if card >= remainders[j - 1] {
                    card += 1;
                }
            }
            pick(card);
        }
    }

    /// Deals into `hand` (cleared first; reused without allocating when it has room) and
    /// returns the cards as a slice.
    pub fn deal_into_hand<'a>(&self, hash: u64, hand: &'a mut Vec<usize>) -> &'a [usize] {
        hand.clear();
        self.deal(hash, |card| hand.push(card));
        hand.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[test]
    fn required_entropy_bits_vectors() {
        assert_eq!(required_entropy_bits(1024, 6), 60);
        assert_eq!(required_entropy_bits(512, 8), 72);
    }

    #[test]
    fn new_dealer_vectors() {
        let cases: [(usize, usize, Option<&str>); 5] = [
            (100, 0, Some("deckSize 100 or handSize 0 is not positive")),
            (100, 101, Some("handSize 101 is greater than deckSize 100")),
            (
                1 << 27,
                2,
                Some("deckSize 134217728 is impractically large"),
            ),
            (
                512,
                8,
                Some("required entropy bits of deckSize 512 and handSize 8 is greater than 60"),
            ),
            (1024, 6, None),
        ];
        for (deck, hand, want) in cases {
            let got = Dealer::new(deck, hand).err();
            assert_eq!(got.as_deref(), want, "deck {deck} hand {hand}");
        }
        assert_eq!(
            Dealer::new(0, 8).err().as_deref(),
            Some("deckSize 0 or handSize 8 is not positive")
        );
    }

    #[test]
    fn card_duplication() {
        let cases = [
            (4, 4),
            (8, 8),
            (10, 10),
            (12, 12),
            (128, 8),
            (256, 7),
            (512, 6),
        ];
        let mut hash: u64 = 0x9e37_79b9_7f4a_7c15;
        for (deck, hand_size) in cases {
            for _ in 0..100 {
                hash = hash
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let dealer = Dealer::new(deck, hand_size).expect("valid dealer");
                let mut hand = Vec::new();
                let cards = dealer.deal_into_hand(hash, &mut hand);
                assert_eq!(cards.len(), hand_size);
                let set: HashSet<usize> = cards.iter().copied().collect();
                assert_eq!(set.len(), hand_size, "duplicate card");
                assert!(cards.iter().all(|&c| c < deck), "card out of range");
            }
        }
    }

    fn ff(n: usize, m: usize) -> usize {
        ((n - m + 1)..=n).product()
    }

    #[test]
    fn uniform_distribution() {
        let spare = 64 - MAX_HASH_BITS;
        let first_max = 1usize << ((ff(64, 3) as f64).log2().ceil() as u32 + spare);
        let cases = [(64, 3, first_max), (128, 3, ff(128, 3)), (50, 4, ff(50, 4))];
        for (deck, hand_size, hash_max) in cases {
            let dealer = Dealer::new(deck, hand_size).expect("valid dealer");
            let falling = ff(deck, hand_size);
            let permutations = ff(hand_size, hand_size);
            let nff = hash_max as f64 / falling as f64;
            let min_count = permutations * nff.floor() as usize;
            let max_count = permutations * nff.ceil() as usize;
            let mut seen: HashMap<usize, usize> = HashMap::new();
            let mut hand = Vec::with_capacity(hand_size);
            for i in 0..hash_max {
                let mut cards = dealer.deal_into_hand(i as u64, &mut hand).to_vec();
                cards.sort_unstable();
                let coord = cards.iter().fold(0usize, |acc, &c| (acc << 7) + c);
                *seen.entry(coord).or_default() += 1;
            }
            assert_eq!(seen.len(), falling / permutations);
            for count in seen.values() {
                assert!(
                    (min_count..=max_count).contains(count),
                    "count {count} not in [{min_count}, {max_count}]"
                );
            }
        }
    }

    #[test]
    fn deal_into_hand_reuses_any_vec() {
        let dealer = Dealer::new(6, 6).expect("valid dealer");
        for initial in [0usize, 4, 6, 10] {
            let mut hand = vec![7; initial];
            assert_eq!(dealer.deal_into_hand(0, &mut hand).len(), 6);
        }
        // Hash 0 deals the identity order.
        let mut hand = Vec::new();
        assert_eq!(dealer.deal_into_hand(0, &mut hand), &[0, 1, 2, 3, 4, 5]);
    }
}
