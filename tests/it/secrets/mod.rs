//! Secret detection: the guard, layouts, prose, `teammem scan`.

mod guard;
mod layouts;
mod prose;
mod scan;
