//! Fair queuing of one priority level's requests (upstream's `fairqueuing`).
