//! Crediting an invoice: the lines of a credit note for money given back. Each line of the
//! invoice is credited at most its own amount, and its tax in proportion to what of the line
//! is credited in all, so an invoice's credit notes add up exactly to it once it is credited
//! in full, and never to more.

use super::{Content, Line, tax_totals};
use crate::domain::tax::round_div;

/// What of each line of an invoice its documents have credited so far (credit notes, less
/// the corrective invoices of refunds that failed afterwards): gross and tax per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credited {
    pub gross: Vec<i64>,
    pub tax: Vec<i64>,
}

impl Credited {
    /// What `documents` credited of `invoice`: each with `true` for a credit note (it
    /// credits), `false` for a corrective invoice (it takes a credit back).
    pub fn of<'a>(invoice: &Content, documents: impl IntoIterator<Item = (&'a Content, bool)>) -> Credited {
        let mut credited = Credited { gross: vec![0; invoice.lines.len()], tax: vec![0; invoice.lines.len()] };
        for (document, credits) in documents {
            let sign = if credits { 1 } else { -1 };
            for line in &document.lines {
                let Some(i) = line.invoice_line.filter(|&i| i < invoice.lines.len()) else { continue };
                credited.gross[i] = credited.gross[i].saturating_add(sign * line.gross);
                credited.tax[i] = credited.tax[i].saturating_add(sign * line.tax_amount);
            }
        }
        credited
    }

    /// What is credited in all.
    pub fn total(&self) -> i64 {
        self.gross.iter().fold(0i64, |a, b| a.saturating_add(*b))
    }
}

/// The lines of a credit note for `amount` more of `invoice`, given what is `credited`:
/// `amount` is shared among the lines in proportion to what each has left to credit (the
/// largest remainders get the units left over), and each line's tax is its tax in proportion
/// to what of it is credited in all, less the tax credited before. `None` when `amount` is
/// not above 0 or more than is left.
pub fn credit_lines(invoice: &Content, credited: &Credited, amount: i64) -> Option<Vec<Line>> {
    let left: Vec<i64> = invoice.lines.iter().zip(&credited.gross).map(|(l, c)| (l.gross - c).max(0)).collect();
    let all_left: i64 = left.iter().sum();
    if amount <= 0 || amount > all_left {
        return None;
    }
    let (amount, all_left) = (i128::from(amount), i128::from(all_left));
    let mut shares: Vec<i128> = left.iter().map(|&l| i128::from(l) * amount / all_left).collect();
    let mut short = amount - shares.iter().sum::<i128>();
    // The units left over go to the largest remainders (the first line first among equals).
    let mut order: Vec<usize> = (0..left.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(i128::from(left[i]) * amount % all_left));
    for i in order {
        if short == 0 {
            break;
        }
        if shares[i] < i128::from(left[i]) {
            shares[i] += 1;
            short -= 1;
        }
    }
    let mut lines = Vec::new();
    for (i, (line, share)) in invoice.lines.iter().zip(shares).enumerate() {
        let gross = i64::try_from(share).ok()?;
        if gross == 0 {
            continue;
        }
        let now_credited = credited.gross[i] + gross;
        let tax_in_all = match now_credited == line.gross {
            true => line.tax_amount,
            false => {
                i64::try_from(round_div(i128::from(line.tax_amount) * i128::from(now_credited), i128::from(line.gross)))
                    .ok()?
            }
        };
        let tax = tax_in_all - credited.tax[i];
        lines.push(Line {
            quantity: 1,
            unit_price: gross,
            discount: 0,
            tax_included: true,
            net: gross - tax,
            tax_amount: tax,
            gross,
            invoice_line: Some(i),
            ..line.clone()
        });
    }
    Some(lines)
}

/// A credit note's content: `lines` of `invoice` (numbered `invoice_number`), with the
/// invoice's parties and notes.
pub fn credit_note(
    invoice: &Content,
    invoice_number: &str,
    lines: Vec<Line>,
    reason: Option<String>,
) -> Option<Content> {
    Some(Content {
        taxes: tax_totals(&lines)?,
        lines,
        invoice_number: Some(invoice_number.to_owned()),
        reason,
        ..invoice.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{issue, line, rate};
    use super::super::{LineTax, TaxTreatment};
    use super::*;
    use crate::domain::tax::LineAmounts;

    /// Credits `invoice` by each of `amounts` in turn: the credit notes.
    fn credit_by(invoice: &Content, amounts: &[i64]) -> Vec<Content> {
        let mut notes: Vec<Content> = Vec::new();
        for &amount in amounts {
            let credited = Credited::of(invoice, notes.iter().map(|n| (n, true)));
            let lines = credit_lines(invoice, &credited, amount).unwrap();
            notes.push(credit_note(invoice, "INV-000001", lines, None).unwrap());
        }
        notes
    }

    #[test]
    fn credit_notes_follow_the_refunded_share_and_add_up_to_their_invoice() {
        let invoice = issue(vec![
            line(11_900, 0, rate(TaxTreatment::Standard, 190_000), true),
            line(1_000, 0, rate(TaxTreatment::Standard, 70_000), false),
        ]);
        let total = invoice.totals();
        assert_eq!(total, LineAmounts { net: 11_000, tax: 1_970, gross: 12_970 });
        let notes = credit_by(&invoice, &[1, 999, 1, 6_776, 5_192, 1]);
        let mut credited = LineAmounts { net: 0, tax: 0, gross: 0 };
        for (note, amount) in notes.iter().zip([1, 999, 1, 6_776, 5_192, 1]) {
            let t = note.totals();
            assert_eq!((t.gross, t.net + t.tax), (amount, amount));
            for l in &note.lines {
                assert!(l.net >= 0 && l.tax_amount >= 0 && l.gross > 0, "{l:?}");
            }
            credited =
                LineAmounts { net: credited.net + t.net, tax: credited.tax + t.tax, gross: credited.gross + t.gross };
        }
        assert_eq!(credited, total, "credited in full, exactly the invoice");
        let all = Credited::of(&invoice, notes.iter().map(|n| (n, true)));
        assert_eq!(all.total(), 12_970);
        assert!(credit_lines(&invoice, &all, 1).is_none(), "never more than the invoice");
        assert!(credit_lines(&invoice, &Credited::of(&invoice, []), 0).is_none());
    }

    #[test]
    fn no_line_is_ever_credited_less_than_nothing() {
        let plain = |amount| line(amount, 0, LineTax::none(), true);
        let invoice = issue(vec![plain(1_000), plain(1_000), plain(1_000)]);
        let notes = credit_by(&invoice, &[1, 1, 1, 2, 2_995]);
        for note in &notes {
            assert!(note.lines.iter().all(|l| l.gross > 0), "{:?}", note.lines);
        }
        let all = Credited::of(&invoice, notes.iter().map(|n| (n, true)));
        assert_eq!(all.gross, [1_000, 1_000, 1_000]);
    }

    #[test]
    fn a_corrective_invoice_takes_its_credit_back() {
        let invoice = issue(vec![line(11_900, 0, rate(TaxTreatment::Standard, 190_000), true)]);
        let notes = credit_by(&invoice, &[5_000]);
        let undone = Credited::of(&invoice, [(&notes[0], true), (&notes[0], false)]);
        assert_eq!(undone, Credited { gross: vec![0], tax: vec![0] });
        assert_eq!(credit_lines(&invoice, &undone, 11_900).unwrap()[0].tax_amount, 1_900);
    }
}
