//! Current-branch sync: commit, merge, budget, kills, index, push URLs, an ignored team folder.

mod budget;
mod commit;
mod concurrent;
mod ff_untracked;
mod ignored_folder;
mod index;
mod kill;
mod listing_skip;
mod merge_driver;
mod network;
mod push_urls;
mod report_unopened;
mod unsafe_entries;
