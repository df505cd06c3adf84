// The payment documents waiting for a signature in the bank.
import { type PageKit, page } from "../kit";
import { get, type PageRoute, pageDoc } from "../page-route";
import { PaymentsPage } from "./view";

export function paymentRoutes(kit: PageKit): PageRoute[] {
  const { payments } = kit.deps;
  const { signedInFrame, view } = kit;
  return [
    get(
      "/admin/payments",
      view((session) =>
        page(
          <PaymentsPage
            frame={signedInFrame(session, "Платежи", "payments")}
            items={payments.forOperator()}
            accounts={kit.deps.admin.accounts.list()}
            error={null}
          />,
        ),
      ),
      { detail: pageDoc("Admin pages: payment documents and where to sign them in the bank") },
    ),
  ];
}
