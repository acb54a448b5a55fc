//! What a document's PDF and page call things, in its language.

use crate::domain::invoice::{DocumentKind, DocumentLanguage};
use crate::domain::vocab::Language;

/// The labels of a document, in English or Russian.
pub struct Words {
    pub language: Language,
    pub invoice: &'static str,
    pub corrective_invoice: &'static str,
    pub credit_note: &'static str,
    pub test: &'static str,
    pub number: &'static str,
    pub issued: &'static str,
    pub payment: &'static str,
    pub corrects: &'static str,
    pub seller: &'static str,
    pub buyer: &'static str,
    pub vat_id: &'static str,
    pub registration: &'static str,
    pub description: &'static str,
    pub quantity: &'static str,
    pub unit_price: &'static str,
    pub discount: &'static str,
    pub rate: &'static str,
    pub net: &'static str,
    pub tax: &'static str,
    pub gross: &'static str,
    pub per_rate: &'static str,
    pub total: &'static str,
    pub paid: &'static str,
    pub due: &'static str,
    pub not_subject: &'static str,
    pub reverse_charge: &'static str,
    pub page: &'static str,
    pub download_pdf: &'static str,
    pub download_xml: &'static str,
    pub sold: &'static str,
}

const EN: Words = Words {
    language: Language::En,
    invoice: "Invoice",
    corrective_invoice: "Corrective invoice",
    credit_note: "Credit note",
    test: "TEST DOCUMENT: made in test mode, not a tax document",
    number: "Number",
    issued: "Date of issue",
    payment: "Payment",
    corrects: "Corrects invoice",
    seller: "Seller",
    buyer: "Buyer",
    vat_id: "VAT ID",
    registration: "Registration",
    description: "Description",
    quantity: "Qty",
    unit_price: "Unit price",
    discount: "Discount",
    rate: "Tax rate",
    net: "Net",
    tax: "Tax",
    gross: "Gross",
    per_rate: "Tax by rate",
    total: "Total",
    paid: "Paid by card",
    due: "Amount due",
    not_subject: "no tax",
    reverse_charge: "reverse charge",
    page: "Page",
    download_pdf: "Download the PDF",
    download_xml: "Download the e-invoice (XML)",
    sold: "What was sold",
};

const RU: Words = Words {
    language: Language::Ru,
    invoice: "Счёт",
    corrective_invoice: "Корректировочный счёт",
    credit_note: "Кредит-нота",
    test: "ТЕСТОВЫЙ ДОКУМЕНТ: создан в тестовом режиме, не налоговый документ",
    number: "Номер",
    issued: "Дата выставления",
    payment: "Платёж",
    corrects: "Исправляет счёт",
    seller: "Продавец",
    buyer: "Покупатель",
    vat_id: "Номер плательщика НДС",
    registration: "Регистрация",
    description: "Наименование",
    quantity: "Кол-во",
    unit_price: "Цена",
    discount: "Скидка",
    rate: "Ставка",
    net: "Сумма",
    tax: "Налог",
    gross: "Всего",
    per_rate: "Налог по ставкам",
    total: "Итого",
    paid: "Оплачено картой",
    due: "К оплате",
    not_subject: "без налога",
    reverse_charge: "обратное начисление",
    page: "Страница",
    download_pdf: "Скачать PDF",
    download_xml: "Скачать электронный счёт (XML)",
    sold: "Что продано",
};

impl Words {
    /// The words of a document in `language`.
    pub fn of(language: DocumentLanguage) -> &'static Words {
        match language {
            DocumentLanguage::En => &EN,
            DocumentLanguage::Ru => &RU,
        }
    }

    /// What a document is called: an invoice, one that corrects another, a credit note.
    pub fn title(&self, kind: DocumentKind, corrects: bool) -> &'static str {
        match (kind, corrects) {
            (DocumentKind::Invoice, false) => self.invoice,
            (DocumentKind::Invoice, true) => self.corrective_invoice,
            (DocumentKind::CreditNote, _) => self.credit_note,
        }
    }
}
