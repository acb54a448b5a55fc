//! Which payments a list shows: the filters of `GET /payments` and the dashboard's list.

use super::Errors;
use super::vocab::PaymentStatus;

/// `?product=&plan=&subscription=&customer=&status=` (or `product_id=` and so on): each one
/// given narrows the list to payments with that value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaymentFilter {
    pub product: Option<String>,
    pub plan: Option<String>,
    pub subscription: Option<String>,
    pub customer: Option<String>,
    pub status: Option<PaymentStatus>,
}

impl PaymentFilter {
    /// The filters among `pairs` (name, value); other names are ignored.
    pub fn parse<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self, Errors> {
        let mut filter = PaymentFilter::default();
        let mut errors = Errors::default();
        for (key, value) in pairs {
            let value = value.as_ref();
            let slot = match key.as_ref().trim_end_matches("_id") {
                "product" => &mut filter.product,
                "plan" => &mut filter.plan,
                "subscription" => &mut filter.subscription,
                "customer" => &mut filter.customer,
                "status" => {
                    match PaymentStatus::parse(value) {
                        Some(status) => filter.status = Some(status),
                        None => errors.add("status", "is not included in the list"),
                    }
                    continue;
                }
                _ => continue,
            };
            *slot = Some(value.to_string());
        }
        errors.into_result(|| filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_read_by_name() {
        let f = PaymentFilter::parse([("product_id", "prd_1"), ("status", "failed"), ("other", "x")]).unwrap();
        assert_eq!(f.product.as_deref(), Some("prd_1"));
        assert_eq!(f.status, Some(PaymentStatus::Failed));
        assert_eq!(f.plan, None);
        let e = PaymentFilter::parse([("status", "paid")]).unwrap_err();
        assert_eq!(e.message(), "Status is not included in the list");
    }
}
