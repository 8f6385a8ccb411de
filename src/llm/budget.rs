//! Token budgets per session and per UTC day.
//!
//! [`Budget`] is pure accounting: the caller passes token counts and the day (days since
//! 1970-01-01 UTC). Semantics: a call is refused once a limit is reached (`used >= limit`);
//! the call that crosses a limit is still allowed to finish and is counted, so spending can
//! overshoot a limit by at most one call. A new day resets the daily count. Persistence comes
//! later through [`Budget::day_usage`] and [`Budget::restore_day`].
//!
//! [`BudgetedClient`] wraps any [`LlmClient`] with a shared budget.

use crate::llm::{BoxFuture, BudgetScope, ChatRequest, ChatResponse, LlmClient, LlmError};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Budget {
    session_limit: Option<u64>,
    daily_limit: Option<u64>,
    session_used: u64,
    day: Option<i64>,
    day_used: u64,
}

impl Budget {
    /// `None` limits are unlimited.
    pub fn new(session_limit: Option<u64>, daily_limit: Option<u64>) -> Budget {
        Budget {
            session_limit,
            daily_limit,
            ..Budget::default()
        }
    }

    /// Continues a day whose usage was persisted earlier.
    pub fn restore_day(&mut self, day: i64, used: u64) {
        self.day = Some(day);
        self.day_used = used;
    }

    /// Ok when another call may start on `day`.
    pub fn check(&self, day: i64) -> Result<(), LlmError> {
        if let Some(limit) = self.session_limit {
            if self.session_used >= limit {
                return Err(LlmError::BudgetExceeded {
                    scope: BudgetScope::Session,
                    used: self.session_used,
                    limit,
                });
            }
        }
        if let Some(limit) = self.daily_limit {
            let used = self.day_usage(day);
            if used >= limit {
                return Err(LlmError::BudgetExceeded {
                    scope: BudgetScope::Day,
                    used,
                    limit,
                });
            }
        }
        Ok(())
    }

    /// Counts `tokens` spent on `day`. A day other than the current one starts a new day
    /// (an older day is counted to the session only, never reopening a past day).
    pub fn record(&mut self, day: i64, tokens: u64) {
        self.session_used = self.session_used.saturating_add(tokens);
        match self.day {
            Some(d) if d == day => self.day_used = self.day_used.saturating_add(tokens),
            Some(d) if d > day => {}
            _ => {
                self.day = Some(day);
                self.day_used = tokens;
            }
        }
    }

    /// Records, then tells whether a further call may start.
    pub fn charge(&mut self, day: i64, tokens: u64) -> Result<(), LlmError> {
        self.record(day, tokens);
        self.check(day)
    }

    pub fn session_used(&self) -> u64 {
        self.session_used
    }

    /// Tokens counted for `day` (0 for any day but the current one).
    pub fn day_usage(&self, day: i64) -> u64 {
        if self.day == Some(day) {
            self.day_used
        } else {
            0
        }
    }
}

/// Today as days since 1970-01-01 UTC (system clock).
pub fn utc_day_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| (d.as_secs() / 86_400) as i64)
        .unwrap_or(0)
}

/// Refuses calls once the shared budget is spent and counts every answered call's tokens.
/// Failed calls cost nothing (providers do not bill them in a way the client can see).
pub struct BudgetedClient<C> {
    inner: C,
    budget: Arc<Mutex<Budget>>,
    today: fn() -> i64,
}

impl<C: LlmClient> BudgetedClient<C> {
    pub fn new(inner: C, budget: Arc<Mutex<Budget>>) -> BudgetedClient<C> {
        BudgetedClient {
            inner,
            budget,
            today: utc_day_now,
        }
    }

    /// Replaces the clock used to find the day (tests).
    pub fn with_day_source(mut self, today: fn() -> i64) -> BudgetedClient<C> {
        self.today = today;
        self
    }

    pub fn budget(&self) -> Arc<Mutex<Budget>> {
        Arc::clone(&self.budget)
    }

    async fn call(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        let day = (self.today)();
        self.budget
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .check(day)?;
        let resp = self.inner.complete(req).await?;
        if !resp.from_cache {
            self.budget
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .record(day, resp.total_tokens());
        }
        Ok(resp)
    }
}

impl<C: LlmClient> LlmClient for BudgetedClient<C> {
    fn complete(&self, req: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(self.call(req))
    }

    fn model_id(&self) -> String {
        self.inner.model_id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_limit_refuses_once_reached() {
        let mut b = Budget::new(Some(100), None);
        assert!(b.charge(1, 60).is_ok());
        let e = b.charge(1, 50).unwrap_err();
        assert_eq!(
            e,
            LlmError::BudgetExceeded {
                scope: BudgetScope::Session,
                used: 110,
                limit: 100
            }
        );
        assert!(b.check(2).is_err(), "a new day does not reset the session");
    }

    #[test]
    fn daily_limit_resets_on_a_new_day() {
        let mut b = Budget::new(None, Some(10));
        assert!(b.charge(5, 10).is_err());
        assert!(b.check(6).is_ok());
        b.record(6, 3);
        assert_eq!(b.day_usage(6), 3);
        b.record(5, 100); // a late count for yesterday does not reopen it
        assert_eq!(b.day_usage(6), 3);
        assert_eq!(b.session_used(), 113);
    }

    #[test]
    fn restored_day_usage_counts() {
        let mut b = Budget::new(None, Some(10));
        b.restore_day(7, 9);
        assert!(b.check(7).is_ok());
        assert!(b.charge(7, 1).is_err());
    }

    #[test]
    fn unlimited_budget_never_refuses() {
        let mut b = Budget::new(None, None);
        assert!(b.charge(1, u64::MAX).is_ok());
        assert!(b.charge(1, u64::MAX).is_ok());
    }
}
