//! paydesk's bePaid calls against the local gateway double: each operation, `RequestID`
//! replay, 3-D Secure, and under every fault an outcome that is either known or looked up,
//! never a second transaction.

use std::time::Duration;

use paydesk::external::acquirer::Check;
use paydesk::external::acquirer::bepaid::gateway::{Account, ChargeKind, ChildKind, Gateway};
use paydesk::external::acquirer::bepaid::status::{CheckoutReading, Reading};
use paydesk::external::acquirer::bepaid::wire::{
    AdditionalData, CardToken, Charge, Checkout, CheckoutSettings, Child, NewCard, Order,
};
use paydesk::external::outbound::Outbound;

use crate::doubles::bepaid::{self as double, Fault};

/// The client's timeout in these tests: generous, so that a busy machine's slow answer is not
/// taken for a lost one.
const TIMEOUT: Duration = crate::helpers::PATIENCE;

/// The client's timeout for a request whose answer the double holds: short, so that the held
/// answer runs past it.
const SHORT: Duration = Duration::from_millis(700);

fn account(url: &str, secret: &str) -> Account {
    Account {
        gateway_url: url.to_string(),
        checkout_url: url.to_string(),
        shop_id: double::SHOP_ID.into(),
        secret_key: secret.into(),
    }
}

fn charge<'a>(tracking_id: &'a str, token: &'a str) -> Charge<'a> {
    Charge {
        amount: 990,
        currency: "EUR",
        description: "Gift card",
        tracking_id,
        test: true,
        duplicate_check: false,
        language: "en",
        return_url: Some("https://shop.example/return"),
        notification_url: None,
        credit_card: CardToken { token },
        customer: None,
        additional_data: AdditionalData::default(),
    }
}

/// The vault's token for the card `number`.
async fn token(gateway: &Gateway<'_>, number: &str) -> String {
    let card = NewCard { number, holder: "Ann Lee", exp_month: "12".into(), exp_year: "2030".into() };
    gateway.store_card(&card).await.unwrap().token.unwrap()
}

/// The double, an outbound client that may reach loopback, and the account.
async fn setup() -> (double::Gateway, Outbound, Account) {
    let gateway = double::Gateway::start().await;
    let account = account(&gateway.url, double::SECRET);
    (gateway, Outbound::new(true), account)
}

#[tokio::test]
async fn a_payment_succeeds_or_is_declined_and_a_3ds_card_waits_for_the_customer() {
    let (double, outbound, account) = setup().await;
    let gateway = Gateway { outbound: &outbound, account: &account, timeout: TIMEOUT };
    let Reading::Succeeded { transaction } = gateway
        .charge(ChargeKind::Payment, &charge("pay_ok", &token(&gateway, "4200000000000000").await), "pay_ok:charge")
        .await
    else {
        panic!("the success card succeeds")
    };
    let card = transaction.credit_card.clone().unwrap();
    assert_eq!((card.last_4.as_deref(), card.token.is_some()), (Some("0000"), true));
    let declined = gateway
        .charge(ChargeKind::Payment, &charge("pay_no", &token(&gateway, "4005550000000019").await), "pay_no:charge")
        .await;
    assert!(matches!(declined, Reading::Declined { code: "card_declined", .. }), "{declined:?}");
    let Reading::NeedsCustomer { uid, redirect_url } = gateway
        .charge(ChargeKind::Payment, &charge("pay_3ds", &token(&gateway, "4012000000003010").await), "pay_3ds:charge")
        .await
    else {
        panic!("the 3-D Secure card waits")
    };
    assert_eq!(redirect_url, format!("{}/process/{uid}", double.url));
    double.finish_3ds(&uid, true);
    assert!(matches!(gateway.lookup("pay_3ds", "payment").await, Reading::Succeeded { .. }));
}

#[tokio::test]
async fn a_repeated_request_id_makes_one_transaction() {
    let (double, outbound, account) = setup().await;
    let gateway = Gateway { outbound: &outbound, account: &account, timeout: TIMEOUT };
    let first = gateway
        .charge(ChargeKind::Payment, &charge("pay_1", &token(&gateway, "4200000000000000").await), "pay_1:charge")
        .await;
    let again = gateway
        .charge(ChargeKind::Payment, &charge("pay_1", &token(&gateway, "4200000000000000").await), "pay_1:charge")
        .await;
    assert_eq!(first, again);
    assert_eq!(double.transactions().len(), 1);
}

#[tokio::test]
async fn under_every_fault_the_outcome_is_known_or_looked_up_and_never_doubled() {
    let faults = [
        (Fault::ServerError, "unknown"),
        (Fault::BadGatewayAfter, "unknown"),
        (Fault::HoldAfter(SHORT * 3), "unknown"),
        (Fault::DropAfter, "unknown"),
        (Fault::TooMany, "later"),
    ];
    for (fault, expected) in faults {
        let (double, outbound, account) = setup().await;
        let gateway = Gateway { outbound: &outbound, account: &account, timeout: TIMEOUT };
        let card = token(&gateway, "4200000000000000").await;
        let held = matches!(fault, Fault::HoldAfter(_));
        let faulted = Gateway { outbound: &outbound, account: &account, timeout: if held { SHORT } else { TIMEOUT } };
        double.fail_next(&[fault]);
        let reading = faulted.charge(ChargeKind::Payment, &charge("pay_f", &card), "pay_f:charge").await;
        let said = match reading {
            Reading::Unknown => "unknown",
            Reading::RetryLater => "later",
            ref other => panic!("{fault:?} read as {other:?}"),
        };
        assert_eq!(said, expected, "{fault:?}");
        // Settled as paydesk settles it: look the reference up; only if nothing is there,
        // send the same request (the same RequestID) again.
        let settled = match gateway.lookup("pay_f", "payment").await {
            Reading::NotFound => {
                gateway
                    .charge(
                        ChargeKind::Payment,
                        &charge("pay_f", &token(&gateway, "4200000000000000").await),
                        "pay_f:charge",
                    )
                    .await
            }
            found => found,
        };
        assert!(matches!(settled, Reading::Succeeded { .. }), "{fault:?}: {settled:?}");
        // And a resend with the same RequestID, whatever happened, still makes no second one.
        gateway
            .charge(ChargeKind::Payment, &charge("pay_f", &token(&gateway, "4200000000000000").await), "pay_f:charge")
            .await;
        let payments = double.transactions().into_iter().filter(|t| t.tracking_id == "pay_f").count();
        assert_eq!(payments, 1, "{fault:?}");
    }
}

#[tokio::test]
async fn captures_voids_and_refunds_follow_the_gateways_rules() {
    let (double, outbound, account) = setup().await;
    let gateway = Gateway { outbound: &outbound, account: &account, timeout: TIMEOUT };
    let Reading::Succeeded { transaction: auth } = gateway
        .charge(ChargeKind::Authorization, &charge("pay_a", &token(&gateway, "4200000000000000").await), "pay_a:charge")
        .await
    else {
        panic!("authorized")
    };
    let capture = |amount| Child { parent_uid: &auth.uid, amount, reason: None };
    let over = gateway.child(ChildKind::Capture, &capture(991), "pay_a:capture").await;
    assert_eq!(over, Reading::Refused { message: "Amount can't be greater than 990".into() });
    let Reading::Succeeded { transaction: captured } =
        gateway.child(ChildKind::Capture, &capture(990), "pay_a:capture:2").await
    else {
        panic!("captured")
    };
    assert!(matches!(gateway.child(ChildKind::Void, &capture(990), "pay_a:void").await, Reading::Refused { .. }));
    // The authorization's money is refunded through its capture, never by its own uid.
    let of_auth = Child { parent_uid: &auth.uid, amount: 300, reason: Some("asked") };
    let refused = gateway.child(ChildKind::Refund, &of_auth, "pay_a:refund:0").await;
    assert_eq!(refused, Reading::Refused { message: "transaction can't be refunded".into() });
    let refund = |amount, reason| Child { parent_uid: &captured.uid, amount, reason };
    let no_reason = gateway.child(ChildKind::Refund, &refund(300, None), "pay_a:refund:1").await;
    assert_eq!(no_reason, Reading::Refused { message: "Reason can't be blank.".into() });
    let part =
        gateway.child(ChildKind::Refund, &refund(300, Some("requested by the customer")), "pay_a:refund:2").await;
    assert!(matches!(part, Reading::Succeeded { .. }));
    let too_much = gateway.child(ChildKind::Refund, &refund(700, Some("again")), "pay_a:refund:3").await;
    assert!(matches!(too_much, Reading::Declined { code: "refund_failed", .. }), "{too_much:?}");
    assert_eq!(double.transactions().len(), 6);
}

#[tokio::test]
async fn the_connection_check_names_what_is_wrong() {
    let (double, outbound, account) = setup().await;
    let gateway = Gateway { outbound: &outbound, account: &account, timeout: TIMEOUT };
    assert_eq!(gateway.check().await, Check::Works);
    let wrong = self::account(&double.url, "not-the-secret");
    assert_eq!((Gateway { outbound: &outbound, account: &wrong, timeout: TIMEOUT }).check().await, Check::Refused);
    let nowhere = self::account("http://127.0.0.1:9", double::SECRET);
    let unreachable = (Gateway { outbound: &outbound, account: &nowhere, timeout: TIMEOUT }).check().await;
    assert!(matches!(unreachable, Check::Unreachable(_)), "{unreachable:?}");
    // Not even sent: safe to send again, and said so.
    let unsent = (Gateway { outbound: &outbound, account: &nowhere, timeout: TIMEOUT })
        .charge(ChargeKind::Payment, &charge("pay_x", &token(&gateway, "4200000000000000").await), "pay_x:charge")
        .await;
    assert!(matches!(unsent, Reading::Unreached { .. }), "{unsent:?}");
    assert_eq!(double.received(), 0);
}

fn checkout(tracking_id: &str) -> Checkout<'_> {
    Checkout {
        attempts: 2,
        version: 2.1,
        transaction_type: "payment",
        test: true,
        settings: CheckoutSettings {
            success_url: "https://pay.example/back",
            decline_url: "https://pay.example/back",
            fail_url: "https://pay.example/back",
            cancel_url: "https://pay.example/back",
            notification_url: None,
            language: "en",
        },
        order: Order {
            amount: 990,
            currency: "EUR",
            description: "Gift card",
            tracking_id,
            additional_data: AdditionalData::default(),
            expired_at: None,
        },
        customer: None,
    }
}

#[tokio::test]
async fn a_checkout_stays_open_through_a_decline_and_finishes_paid_or_expires_unpaid() {
    let (double, outbound, account) = setup().await;
    let gateway = Gateway { outbound: &outbound, account: &account, timeout: TIMEOUT };
    let (token, redirect_url) = gateway.start_checkout(checkout("pay_c")).await.unwrap();
    assert_eq!(redirect_url, format!("{}/checkout?token={token}", double.url));
    assert_eq!(gateway.checkout_state(&token).await, CheckoutReading::Open);
    double.pay_checkout(&token, "4005550000000019").unwrap();
    assert_eq!(gateway.checkout_state(&token).await, CheckoutReading::Open, "another card may follow a decline");
    let uid = double.pay_checkout(&token, "4200000000000000").unwrap();
    let CheckoutReading::Finished(Reading::Succeeded { transaction }) = gateway.checkout_state(&token).await else {
        panic!("paid on the processor's page")
    };
    assert_eq!(transaction.uid, uid);
    // The same outcome by paydesk's own reference, as when the customer never comes back.
    let Reading::Succeeded { transaction } = gateway.lookup("pay_c", "payment").await else { panic!("found") };
    assert_eq!(transaction.uid, uid);

    // Its last attempt declined, the page closes with the decline.
    let (declined, _) = gateway.start_checkout(checkout("pay_f")).await.unwrap();
    double.pay_checkout(&declined, "4005550000000019").unwrap();
    double.pay_checkout(&declined, "4005550000000019").unwrap();
    let closed = gateway.checkout_state(&declined).await;
    assert!(matches!(closed, CheckoutReading::Finished(Reading::Declined { .. })), "{closed:?}");

    let (unpaid, _) = gateway.start_checkout(checkout("pay_d")).await.unwrap();
    double.expire_checkout(&unpaid);
    assert_eq!(gateway.checkout_state(&unpaid).await, CheckoutReading::Expired);
    let wrong = self::account(&double.url, "not-the-secret");
    let refused =
        (Gateway { outbound: &outbound, account: &wrong, timeout: TIMEOUT }).start_checkout(checkout("pay_e")).await;
    assert!(matches!(refused, Err(Reading::Refused { .. })), "{refused:?}");
    assert_eq!(double.received(), 0, "no money request was made by paydesk");
}
