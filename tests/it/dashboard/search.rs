//! Searches find each object by its words of now, whether the object was made, renamed or
//! removed before or after SQLite's word index took it in (the server adds new rows' words a
//! moment after their insert; a search adds what is still missing first).

use paydesk::db::entities::products;
use sea_orm::ConnectionTrait;
use serde_json::json;

use super::*;
use crate::helpers::*;

db_tests! {
    async fn a_search_finds_each_product_by_its_name_of_now_however_late_its_words_were_indexed(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let mut body = test_product_body();
        body["name"] = json!("Alpha");
        let early = app.product(&shop, &body).await;
        let early = early["id"].as_str().unwrap();
        // Indexed, then renamed: its old words leave the index, its new ones come in.
        paydesk::db::search_index::catch_up(&app.db).await.unwrap();
        let (status, _) = app.put(&shop, &format!("/products/{early}"), &json!({"name": "Gamma"})).await;
        assert_eq!(status, reqwest::StatusCode::NO_CONTENT);
        // Made, renamed, and made and removed, in one transaction that no catch-up can enter.
        let copy = |id: &str, name: &str| {
            use sea_orm::{IdenStatic, Iterable};
            let kept: Vec<String> = products::Column::iter()
                .map(|c| IdenStatic::as_str(&c).to_owned())
                .filter(|c| !["seq", "id", "name"].contains(&c.as_str()))
                .collect();
            let kept = kept.join(", ");
            format!(
                "INSERT INTO products (id, name, {kept}) SELECT '{id}', '{name}', {kept} FROM products WHERE id = '{early}';"
            )
        };
        let begin = if app.backend == Backend::Sqlite { "BEGIN IMMEDIATE;" } else { "BEGIN;" };
        let statements = [
            begin.to_string(),
            copy("prod_late", "Beta"),
            "UPDATE products SET name = 'Delta' WHERE id = 'prod_late';".to_string(),
            copy("prod_gone", "Epsilon"),
            "DELETE FROM products WHERE id = 'prod_gone';".to_string(),
            "COMMIT;".to_string(),
        ];
        app.db.execute_unprepared(&statements.concat()).await.unwrap();

        // What each name finds: the object named so now, or nothing.
        for (q, found) in [("alpha", None), ("gamma", Some("Gamma")), ("beta", None), ("delta", Some("Delta")), ("epsilon", None)] {
            let page = m.get(&format!("/dashboard/products?q={q}")).await;
            let rows = page.html.matches("<tr>").count().saturating_sub(1);
            match found {
                Some(name) => assert!(rows == 1 && page.html.contains(name), "{q} finds {name}: {}", page.html),
                None => assert_eq!(rows, 0, "{q} finds nothing: {}", page.html),
            }
        }
        // Renamed after its words were indexed, by a row that waited for the index.
        paydesk::db::search_index::catch_up(&app.db).await.unwrap();
        app.db.execute_unprepared("UPDATE products SET name = 'Zeta' WHERE id = 'prod_late'").await.unwrap();
        let page = m.get("/dashboard/products?q=zeta").await;
        assert!(page.html.contains("Zeta") && !m.get("/dashboard/products?q=delta").await.html.contains("Delta"));
        if app.backend == Backend::Sqlite {
            app.db.execute_unprepared("INSERT INTO products_search(products_search) VALUES ('integrity-check')").await.unwrap();
        }
    }
}
