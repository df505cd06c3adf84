// An account's sync in its row of the accounts page: on or off, since when, how often, the last
// and next run, the bank's last refusal, and the form that switches and tunes it.
import type { SyncView } from "../../../sync/model";
import { formatDate, formatDateTime } from "../format";
import { attr, Badge, PostForm, RuDateInput } from "../layout";

/** The account's sync: its state and the bank's last refusal, and the form that switches it. */
export function SyncCell({ sync, csrf, timeZone }: { sync: SyncView; csrf: string; timeZone: string }) {
  return (
    <>
      {sync.enabled ? <Badge kind="ok" text="включена" /> : <Badge kind="plain" text="выключена" />}
      {sync.enabled ? (
        <div safe>{`с ${formatDate(sync.since)}, каждые ${sync.interval_minutes} мин`}</div>
      ) : (
        ""
      )}
      {sync.last_run_at ? (
        <div safe>{`последний запуск ${formatDateTime(sync.last_run_at, timeZone)}`}</div>
      ) : (
        ""
      )}
      {sync.next_run_at ? <div safe>{`следующий ${formatDateTime(sync.next_run_at, timeZone)}`}</div> : ""}
      {sync.last_error ? (
        <div>
          <Badge kind="bad" text="ошибка банка" /> <span safe>{sync.last_error}</span>
        </div>
      ) : (
        ""
      )}
      <details>
        <summary>Настроить</summary>
        <PostForm action={`/admin/accounts/${sync.bank_account_id}/sync`} csrf={csrf}>
          <label>
            <input type="checkbox" name="enabled" checked={sync.enabled} /> Заказывать выписки самому
          </label>
          <label>
            С даты
            <RuDateInput name="since" value={formatDate(sync.since)} />
          </label>
          <label>
            Интервал, минут (5–1440)
            <input
              name="interval_minutes"
              type="number"
              min="5"
              max="1440"
              value={attr(String(sync.interval_minutes))}
            />
          </label>
          <button type="submit" class="secondary">
            Сохранить
          </button>
        </PostForm>
      </details>
    </>
  );
}
