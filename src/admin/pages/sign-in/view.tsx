// The sign-in form.
import { ErrorBox, type Frame, Layout } from "../layout";

export function LoginPage({ frame, error, next }: { frame: Frame; error: string | null; next?: string }) {
  return (
    <Layout frame={frame}>
      <section class="card login">
        <h1>Вход в администрирование</h1>
        <ErrorBox message={error} />
        <form method="post" action="/admin/login">
          {next ? <input type="hidden" name="next" value={next} /> : ""}
          <label>
            Токен администратора (SVC_ADMIN_TOKEN)
            <input type="password" name="token" autocomplete="off" required autofocus />
          </label>
          <button type="submit">Войти</button>
        </form>
      </section>
    </Layout>
  );
}
