//! Who may do what in a shop: the roles of its dashboard users and the permissions each role
//! holds (README's permission matrix is this table), and who may give or take which role.

use super::vocab::words;

words! {
    /// What a dashboard user of a shop may do: `owner` everything; `administrator` everything
    /// but other owners and the shop's security settings; `developer` the catalogue and the
    /// integration (API key, webhooks); `support` payments, customers and subscriptions;
    /// `analyst` reads and exports.
    Role { Owner = "owner", Administrator = "administrator", Developer = "developer", Support = "support", Analyst = "analyst" }
}

/// Something a dashboard user may be allowed to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// What every signed-in user may do for themselves: the overview, their own password,
    /// language, two-step login and sessions, logging out.
    Own,
    ReadPayments,
    /// Capture, void and refund.
    ChangePayments,
    ReadCatalog,
    /// Products, plans and coupons.
    ChangeCatalog,
    ReadCustomers,
    /// Customers and subscriptions: create, edit, cancel, pause, change plan, discounts.
    ChangeCustomers,
    /// Download lists as CSV.
    Export,
    /// See the shop's API credentials and rotate its secret key.
    ApiKeys,
    ReadWebhooks,
    /// Add, change, remove webhook endpoints, roll their secrets, redeliver events.
    ChangeWebhooks,
    ReadProcessor,
    /// The processor's credentials and where cards are entered.
    ChangeProcessor,
    ReadMails,
    /// Which mails customers get, and the subscriber page's choices.
    ChangeMails,
    /// The shop's name, URL, zone and notification URL.
    ChangeShop,
    ReadUsers,
    /// Invite, remove, and give roles.
    ChangeUsers,
    /// Shop-wide security: two-step login required of every user, how long sessions live.
    ShopSecurity,
    /// Read and export the audit trail.
    ReadAudit,
    /// Invoices, credit notes, and the seller details, number series and tax rates they use.
    ReadBooks,
    /// The seller details, the number series and the tax rates.
    ChangeBooks,
    /// The revenue figures: MRR, its movements, churn, and the subscriptions behind them.
    ReadRevenue,
}

use Permission::*;

/// Each permission with the roles that hold it, in the order of [`Role::ALL`]: owner,
/// administrator, developer, support, analyst.
pub const MATRIX: &[(Permission, [bool; 5])] = &[
    (Own, [true, true, true, true, true]),
    (ReadPayments, [true, true, true, true, true]),
    (ChangePayments, [true, true, false, true, false]),
    (ReadCatalog, [true, true, true, true, true]),
    (ChangeCatalog, [true, true, true, false, false]),
    (ReadCustomers, [true, true, true, true, true]),
    (ChangeCustomers, [true, true, false, true, false]),
    (Export, [true, true, true, false, true]),
    (ApiKeys, [true, true, true, false, false]),
    (ReadWebhooks, [true, true, true, false, false]),
    (ChangeWebhooks, [true, true, true, false, false]),
    (ReadProcessor, [true, true, true, false, false]),
    (ChangeProcessor, [true, true, false, false, false]),
    (ReadMails, [true, true, true, true, true]),
    (ChangeMails, [true, true, false, false, false]),
    (ChangeShop, [true, true, false, false, false]),
    (ReadUsers, [true, true, false, false, false]),
    (ChangeUsers, [true, true, false, false, false]),
    (ShopSecurity, [true, false, false, false, false]),
    (ReadAudit, [true, true, false, false, false]),
    (ReadBooks, [true, true, true, true, true]),
    (ChangeBooks, [true, true, false, false, false]),
    (ReadRevenue, [true, true, false, false, true]),
];

impl Role {
    /// Whether this role holds `permission`.
    pub fn can(self, permission: Permission) -> bool {
        let column = Role::ALL.iter().position(|r| *r == self).unwrap_or(usize::MAX);
        MATRIX.iter().any(|(p, roles)| *p == permission && roles.get(column).copied().unwrap_or(false))
    }

    /// Whether a user of this role may give `role` to someone, or change or remove a user who
    /// has `role`: owners may touch every role, administrators every role but an owner's.
    pub fn manages(self, role: Role) -> bool {
        match self {
            Role::Owner => true,
            Role::Administrator => role != Role::Owner,
            _ => false,
        }
    }
}

/// A change one user of a shop makes to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberChange {
    /// Gives the user another role.
    Role(Role),
    /// Takes the user out of the shop.
    Remove,
}

/// Why a change of a user was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The actor's role does not manage the user's role, or the role given.
    NotAllowed,
    /// It would leave the shop without an owner who can sign in.
    LastOwner,
    /// Nobody removes themselves: another user of the shop can.
    Yourself,
}

/// The user a change is made to, as it stands when the change is made.
#[derive(Debug, Clone, Copy)]
pub struct Member {
    pub role: Role,
    /// Whether this is the actor themselves.
    pub is_actor: bool,
    /// Whether they have set a password (an invited user has not).
    pub joined: bool,
}

/// Whether a user of role `actor` may make `change` to `target`, in a shop with `owners`
/// owners who have joined (the target among them if they are one).
pub fn may_change(actor: Role, target: Member, change: MemberChange, owners: usize) -> Result<(), Refusal> {
    if change == MemberChange::Remove && target.is_actor {
        return Err(Refusal::Yourself);
    }
    let gives = match change {
        MemberChange::Role(role) => Some(role),
        MemberChange::Remove => None,
    };
    if !actor.can(ChangeUsers) || !actor.manages(target.role) || gives.is_some_and(|r| !actor.manages(r)) {
        return Err(Refusal::NotAllowed);
    }
    let leaves_owners = target.role == Role::Owner && gives != Some(Role::Owner);
    if leaves_owners && target.joined && owners <= 1 {
        return Err(Refusal::LastOwner);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_permission_is_in_the_matrix_once() {
        let all = [
            Own,
            ReadPayments,
            ChangePayments,
            ReadCatalog,
            ChangeCatalog,
            ReadCustomers,
            ChangeCustomers,
            Export,
            ApiKeys,
            ReadWebhooks,
            ChangeWebhooks,
            ReadProcessor,
            ChangeProcessor,
            ReadMails,
            ChangeMails,
            ChangeShop,
            ReadUsers,
            ChangeUsers,
            ShopSecurity,
            ReadAudit,
            ReadBooks,
            ChangeBooks,
            ReadRevenue,
        ];
        for p in all {
            assert_eq!(MATRIX.iter().filter(|(q, _)| *q == p).count(), 1, "{p:?}");
        }
        assert_eq!(MATRIX.len(), all.len());
    }

    #[test]
    fn owners_can_everything_and_each_change_needs_its_read() {
        for (p, _) in MATRIX {
            assert!(Role::Owner.can(*p), "{p:?}");
        }
        for role in Role::ALL {
            for (change, read) in [
                (ChangePayments, ReadPayments),
                (ChangeCatalog, ReadCatalog),
                (ChangeCustomers, ReadCustomers),
                (ChangeWebhooks, ReadWebhooks),
                (ChangeProcessor, ReadProcessor),
                (ChangeMails, ReadMails),
                (ChangeUsers, ReadUsers),
                (ChangeBooks, ReadBooks),
            ] {
                assert!(!role.can(change) || role.can(read), "{role}: {change:?} without {read:?}");
            }
        }
    }

    #[test]
    fn support_refunds_without_keys_and_analysts_only_read() {
        assert!(Role::Support.can(ChangePayments) && !Role::Support.can(ApiKeys) && !Role::Support.can(Export));
        let changes = [
            ChangePayments,
            ChangeCatalog,
            ChangeCustomers,
            ApiKeys,
            ChangeWebhooks,
            ChangeProcessor,
            ChangeMails,
            ChangeShop,
            ChangeUsers,
        ];
        assert!(changes.iter().all(|p| !Role::Analyst.can(*p)));
        assert!(Role::Analyst.can(Export));
        assert!(Role::Administrator.can(ChangeUsers) && !Role::Developer.can(ReadUsers));
        assert!(!Role::Administrator.can(ShopSecurity));
    }

    #[test]
    fn only_owners_touch_owners() {
        assert!(Role::Owner.manages(Role::Owner));
        assert!(Role::Administrator.manages(Role::Administrator) && !Role::Administrator.manages(Role::Owner));
        assert!(Role::ALL[2..].iter().all(|r| !r.manages(Role::Analyst)));
    }

    #[test]
    fn a_shop_keeps_an_owner_and_nobody_removes_themselves() {
        let owner = |is_actor, joined| Member { role: Role::Owner, is_actor, joined };
        let demote = MemberChange::Role(Role::Administrator);
        assert_eq!(may_change(Role::Owner, owner(true, true), demote, 1), Err(Refusal::LastOwner));
        assert_eq!(may_change(Role::Owner, owner(false, true), MemberChange::Remove, 1), Err(Refusal::LastOwner));
        assert_eq!(may_change(Role::Owner, owner(true, true), demote, 2), Ok(()));
        assert_eq!(may_change(Role::Owner, owner(true, true), MemberChange::Remove, 2), Err(Refusal::Yourself));
        // An invited owner who never joined may go: they are not what keeps the shop owned.
        assert_eq!(may_change(Role::Owner, owner(false, false), MemberChange::Remove, 1), Ok(()));
        assert_eq!(may_change(Role::Administrator, owner(false, true), demote, 3), Err(Refusal::NotAllowed));
        let analyst = Member { role: Role::Analyst, is_actor: false, joined: true };
        let promote = MemberChange::Role(Role::Owner);
        assert_eq!(may_change(Role::Administrator, analyst, promote, 1), Err(Refusal::NotAllowed));
        assert_eq!(may_change(Role::Administrator, analyst, MemberChange::Role(Role::Support), 1), Ok(()));
        assert_eq!(may_change(Role::Developer, analyst, MemberChange::Remove, 1), Err(Refusal::NotAllowed));
    }
}
