//! Client-side rate limiting: a token bucket on HTTP requests per minute.
//!
//! The bucket holds at most `ceil(rpm / 6)` tokens (ten seconds' worth, at least one), so a
//! burst never exceeds a sixth of the minute's quota, and refills continuously at `rpm / 60`
//! tokens per second. The pure accounting lives in [`Bucket`]; [`RateLimiter`] adds waiting.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Pure token-bucket state, driven by caller-supplied instants.
#[derive(Debug, Clone)]
pub struct Bucket {
    capacity: f64,
    per_sec: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    /// A full bucket for `rpm` requests per minute (`rpm` must be > 0).
    pub fn new(rpm: u32, now: Instant) -> Bucket {
        let rpm = rpm.max(1) as f64;
        let capacity = (rpm / 6.0).ceil().max(1.0);
        Bucket {
            capacity,
            per_sec: rpm / 60.0,
            tokens: capacity,
            last: now,
        }
    }

    /// Takes a token if one is available at `now`; otherwise says how long until one is.
    pub fn try_take(&mut self, now: Instant) -> Result<(), Duration> {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.per_sec).min(self.capacity);
        self.last = self.last.max(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            let missing = 1.0 - self.tokens;
            Err(Duration::from_secs_f64(missing / self.per_sec).max(Duration::from_millis(1)))
        }
    }

    pub fn capacity(&self) -> u32 {
        self.capacity as u32
    }
}

/// An async limiter shared by the calls of one client. `None` rpm means unlimited.
#[derive(Debug)]
pub struct RateLimiter {
    bucket: Option<Mutex<Bucket>>,
}

impl RateLimiter {
    pub fn new(requests_per_minute: u32) -> RateLimiter {
        RateLimiter {
            bucket: (requests_per_minute > 0)
                .then(|| Mutex::new(Bucket::new(requests_per_minute, Instant::now()))),
        }
    }

    /// Waits until a request may be sent. Cancel-safe: dropping the future takes no token.
    pub async fn acquire(&self) {
        let Some(bucket) = &self.bucket else { return };
        loop {
            let wait = {
                let mut b = bucket.lock().unwrap_or_else(|p| p.into_inner());
                match b.try_take(Instant::now()) {
                    Ok(()) => return,
                    Err(wait) => wait,
                }
            };
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_allows_a_burst_of_ten_seconds_worth_then_refills() {
        let t0 = Instant::now();
        let mut b = Bucket::new(60, t0); // 1/s, capacity 10
        assert_eq!(b.capacity(), 10);
        for _ in 0..10 {
            assert!(b.try_take(t0).is_ok());
        }
        let wait = b.try_take(t0).unwrap_err();
        assert!(wait > Duration::from_millis(900) && wait <= Duration::from_secs(1));
        assert!(b.try_take(t0 + Duration::from_secs(1)).is_ok());
        assert!(b.try_take(t0 + Duration::from_secs(1)).is_err());
    }

    #[test]
    fn tiny_rates_still_allow_one_request() {
        let t0 = Instant::now();
        let mut b = Bucket::new(1, t0);
        assert!(b.try_take(t0).is_ok());
        let wait = b.try_take(t0).unwrap_err();
        assert!(wait > Duration::from_secs(59));
    }

    #[test]
    fn clock_going_backwards_does_not_mint_tokens() {
        let t0 = Instant::now() + Duration::from_secs(5);
        let mut b = Bucket::new(6, t0); // capacity 1
        assert!(b.try_take(t0).is_ok());
        assert!(b.try_take(t0 - Duration::from_secs(5)).is_err());
    }
}
