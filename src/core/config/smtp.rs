//! `PAYDESK_SMTP_URL`: the SMTP server subscriber mails go through, and how.

/// How the SMTP server is reached.
#[derive(Clone, PartialEq, Eq)]
pub struct Smtp {
    pub host: String,
    pub port: u16,
    pub security: SmtpSecurity,
    /// User name and password, when the server wants them.
    pub credentials: Option<(String, String)>,
    /// How long a connection, a command or the message may take.
    pub timeout: std::time::Duration,
}

impl std::fmt::Debug for Smtp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let user = self.credentials.as_ref().map(|(user, _)| user.as_str());
        write!(f, "Smtp({:?} {}:{} user {user:?})", self.security, self.host, self.port)
    }
}

/// How an SMTP connection is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpSecurity {
    /// TLS from the first byte (`smtps://`).
    Tls,
    /// STARTTLS, required: a server that does not offer it gets nothing (`smtp://`).
    StartTls,
    /// Plain text (`smtp://…?tls=none`), for a relay on a trusted network or a test server.
    Plain,
}

impl Smtp {
    /// `smtp://USER:PASSWORD@HOST:PORT?tls=none&timeout=SECONDS`, or `smtps://…`.
    pub fn parse(text: &str) -> Result<Smtp, String> {
        let url = url::Url::parse(text.trim()).map_err(|_| "is not a URL like smtp://user:password@host:587")?;
        let mut security = match url.scheme() {
            "smtp" => SmtpSecurity::StartTls,
            "smtps" => SmtpSecurity::Tls,
            _ => return Err("must start with smtp:// or smtps://".into()),
        };
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or("names no host")?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
        let mut timeout = std::time::Duration::from_secs(30);
        for (key, value) in url.query_pairs() {
            match (key.as_ref(), value.as_ref()) {
                ("tls", "none") if security == SmtpSecurity::StartTls => security = SmtpSecurity::Plain,
                ("tls", "required") if security == SmtpSecurity::StartTls => {}
                ("timeout", seconds) => match seconds.parse::<u64>() {
                    Ok(s) if (1..=300).contains(&s) => timeout = std::time::Duration::from_secs(s),
                    _ => return Err("has a timeout that is not a whole number of seconds from 1 to 300".into()),
                },
                _ => return Err(format!("has an unknown setting {key}={value} (tls=none or timeout=SECONDS)")),
            }
        }
        let port = url.port().unwrap_or(match security {
            SmtpSecurity::Tls => 465,
            SmtpSecurity::StartTls => 587,
            SmtpSecurity::Plain => 25,
        });
        let decode =
            |s: &str| url::form_urlencoded::parse(s.as_bytes()).map(|(k, _)| k.into_owned()).collect::<String>();
        let credentials = match (url.username(), url.password()) {
            ("", None) => None,
            (user, password) => Some((decode(user), decode(password.unwrap_or("")))),
        };
        Ok(Smtp { host, port, security, credentials, timeout })
    }
}
