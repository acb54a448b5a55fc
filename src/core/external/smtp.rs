//! The SMTP client: one message per connection through the operator's server (lettre over
//! rustls), with the answer read as sent, to try again, or refused for good.

use std::time::{Duration, Instant};

use lettre::message::{Mailbox, MultiPart, header::ContentType};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::config::{Smtp, SmtpSecurity};

/// A message ready to send.
pub struct Outgoing<'a> {
    /// The sender's address, and the name shown with it (the shop's).
    pub from: (&'a str, &'a str),
    pub to: &'a str,
    pub subject: &'a str,
    pub message_id: &'a str,
    pub text: &'a str,
    pub html: &'a str,
    /// Extra headers: `(name, value)`.
    pub headers: Vec<(&'static str, String)>,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent {
    /// The server took the message (its reply code).
    Accepted(u16),
    /// Not taken this time (a 4xx reply, no connection, a timeout): try again later. Whether
    /// a timed-out message arrived is unknown; the retry carries the same `Message-ID`.
    Later { code: Option<u16>, error: String },
    /// Refused for good (a 5xx reply, or a message that cannot be built).
    Refused { code: Option<u16>, error: String },
}

/// The operator's SMTP server.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    /// The whole exchange's bound: lettre's own timeout does not cover every read of the
    /// async transport (a server that takes the message and never answers would hold it).
    timeout: Duration,
}

impl Mailer {
    /// The client of `smtp`; `Err` names what is wrong with it.
    pub fn new(smtp: &Smtp) -> Result<Mailer, String> {
        let tls = |host: &str| TlsParameters::new(host.to_string()).map_err(|e| format!("TLS for {host}: {e}"));
        let builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(smtp.host.as_str())
            .port(smtp.port)
            .timeout(Some(smtp.timeout));
        let builder = match smtp.security {
            SmtpSecurity::Tls => builder.tls(Tls::Wrapper(tls(&smtp.host)?)),
            SmtpSecurity::StartTls => builder.tls(Tls::Required(tls(&smtp.host)?)),
            SmtpSecurity::Plain => builder.tls(Tls::None),
        };
        let builder = match &smtp.credentials {
            Some((user, password)) => builder.credentials(Credentials::new(user.clone(), password.clone())),
            None => builder,
        };
        Ok(Mailer { transport: builder.build(), timeout: smtp.timeout })
    }

    /// Sends one message; answers how it ended and how long it took.
    pub async fn send(&self, mail: &Outgoing<'_>) -> (Sent, Duration) {
        let started = Instant::now();
        let message = match build(mail) {
            Ok(message) => message,
            Err(error) => return (Sent::Refused { code: None, error }, started.elapsed()),
        };
        let sent = match tokio::time::timeout(self.timeout, self.transport.send(message)).await {
            Err(_) => {
                let error =
                    format!("no answer within {} s: whether the server took it is unknown", self.timeout.as_secs());
                Sent::Later { code: None, error }
            }
            Ok(Ok(response)) => Sent::Accepted(u16::from(response.code())),
            Ok(Err(e)) => {
                let code = e.status().map(u16::from);
                let error = e.to_string();
                if e.is_permanent() { Sent::Refused { code, error } } else { Sent::Later { code, error } }
            }
        };
        (sent, started.elapsed())
    }
}

fn build(mail: &Outgoing<'_>) -> Result<Message, String> {
    let mailbox = |name: Option<&str>, address: &str| -> Result<Mailbox, String> {
        let address = address.parse().map_err(|e| format!("the address {address:?}: {e}"))?;
        Ok(Mailbox::new(name.map(str::to_string), address))
    };
    let mut builder = Message::builder()
        .from(mailbox(Some(mail.from.1), mail.from.0)?)
        .to(mailbox(None, mail.to)?)
        .subject(mail.subject)
        .message_id(Some(mail.message_id.to_string()));
    for (name, value) in &mail.headers {
        let name = lettre::message::header::HeaderName::new_from_ascii_str(name);
        builder = builder.raw_header(lettre::message::header::HeaderValue::new(name, value.clone()));
    }
    let body = MultiPart::alternative()
        .singlepart(lettre::message::SinglePart::builder().header(ContentType::TEXT_PLAIN).body(mail.text.to_string()))
        .singlepart(lettre::message::SinglePart::builder().header(ContentType::TEXT_HTML).body(mail.html.to_string()));
    builder.multipart(body).map_err(|e| format!("the message: {e}"))
}
