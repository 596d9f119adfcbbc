//! Recall: ranking, freshness of the on-disk index, the live index.

mod freshness;
mod live;
mod ranking;
