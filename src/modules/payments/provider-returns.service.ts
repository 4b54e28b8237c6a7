import type { Logger } from 'pino';
import type {
  BrowserReturn,
  Connector,
  ProviderWebhook,
  ReturnResult,
  StatusResult,
  WebhookResult,
} from '../../connectors/connector.js';
import type { ConnectorDirectory } from '../../connectors/directory.js';
import { CallInTransactionError, type Db } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { notFound } from '../../domain/errors.js';
import type { ConnectorAccountsService } from '../connector-accounts/connector-accounts.service.js';
import type { AuthenticationService, AuthenticationView } from './authentication.service.js';
import { toConnectorPayment } from './payments.model.js';
import type { PaymentRow, PaymentsRepo } from './payments.repo.js';
import type { PaymentStates } from './payments.states.js';
import { UNANSWERED_FAILURES } from './sync-schedule.js';

const isFinalAnswer = (status: StatusResult | undefined): status is StatusResult =>
  status?.outcome === 'captured' || status?.outcome === 'failed';

/**
 * What comes back from a provider: the customer's browser at Kosh's callback, and the provider's
 * own webhooks. Neither is trusted as it arrives: a return counts only when the connector verified
 * its signature and it agrees with Kosh's own row; otherwise Kosh asks the provider (`status`), and
 * when no answer can be had an unsigned return changes nothing.
 * A webhook that does not verify only makes Kosh ask sooner. Every outcome goes through the same
 * `apply` as the reconciler's, under the payment's row lock, so arriving twice changes nothing.
 */
export function createProviderReturns(deps: {
  db: Db;
  repo: PaymentsRepo;
  states: PaymentStates;
  authentication: AuthenticationService;
  connectors: ConnectorDirectory;
  clock: Clock;
  publicUrl: string;
  log: Logger;
  /** Provider webhook events already applied, by the provider's event id. */
  webhookEvents: Pick<ConnectorAccountsService, 'seenWebhookEvent' | 'rememberWebhookEvent'>;
  /**
   * Has the refund reconciler ask the provider about this refund at once (the refunds module,
   * wired in by the container): true when a refund of that account was waiting for an answer.
   */
  askAboutRefund: (connectorAccountId: string, refundId: string) => Promise<boolean>;
}) {
  const { db, repo, states, authentication, connectors, clock, publicUrl, log, webhookEvents } = deps;

  async function ask(connector: Connector, payment: PaymentRow): Promise<StatusResult> {
    try {
      return await connector.status(toConnectorPayment(payment, publicUrl));
    } catch (error) {
      if (error instanceof CallInTransactionError) throw error;
      log.warn({ err: error, payment_id: payment.id }, 'provider status call failed');
      return { outcome: 'unknown', reason: error instanceof Error ? error.message : String(error) };
    }
  }

  return {
    /**
     * The browser back from the provider (GET or POST): verify, cross-check, ask when in doubt,
     * record the outcome, then send the browser to the merchant's return_url with the signed POST.
     */
    async callback(paymentId: string, browserReturn: BrowserReturn): Promise<AuthenticationView> {
      const payment = await repo.findById(db, paymentId);
      if (!payment) throw notFound('payment', paymentId);
      const connector = await connectors.forPayment(payment);
      if (!connector.handleReturn) throw notFound('payment callback');
      // A payment already decided (a webhook came first, or the page was reloaded) is only shown,
      // unless it failed only because Kosh stopped waiting and is still being asked about: the
      // bank may have authorised it since, and a customer back from the provider is told what the
      // provider says, not that the payment failed (and pays a second time).
      const mayBeLate =
        payment.status === 'failed' &&
        payment.next_sync_at !== null &&
        UNANSWERED_FAILURES.has(payment.error_code ?? '');
      if (payment.status === 'captured' || (payment.status === 'failed' && !mayBeLate))
        return authentication.returnView(payment);
      let checked: ReturnResult;
      try {
        checked = await connector.handleReturn(toConnectorPayment(payment, publicUrl), browserReturn);
      } catch (error) {
        if (error instanceof CallInTransactionError) throw error;
        log.warn({ err: error, payment_id: payment.id }, 'provider return could not be read');
        checked = { verified: false };
      }
      let answer: StatusResult;
      let asked = false;
      if (checked.verified && isFinalAnswer(checked.status)) {
        answer = checked.status;
      } else {
        answer = await ask(connector, payment);
        asked = true;
      }
      // A return the provider signed says the customer acted there (Razorpay's: the bank
      // authorised): while nobody can say yet what came of it, the payment waits for the bank's
      // answer (pending), with the pending timeout as its deadline.
      if (answer.outcome === 'unknown' && checked.verified) answer = { ...answer, outcome: 'pending' };
      // Otherwise an unknown answer moves nothing: a return that carries nothing the provider
      // signed (anyone who knows the payment id can send one) is not the customer acting.
      const settled = (await states.apply(payment.id, answer, { asked, seen: payment })) ?? payment;
      if (answer.outcome === 'unknown' && settled.status === 'created') {
        // The payment stays as it was and the reconciler keeps asking. The browser is told what it
        // would be told of a payment waiting for the bank: Kosh is confirming it (`pending`).
        return authentication.returnView({ ...settled, status: 'pending' });
      }
      return authentication.returnView(settled);
    },

    /**
     * A provider's own webhook for one of its accounts. Answers quickly; repeated deliveries change
     * nothing. Undefined when no such connector account exists here.
     */
    async webhook(
      connectorName: string,
      connectorAccountId: string,
      webhook: ProviderWebhook,
    ): Promise<{ received: true } | undefined> {
      const connector = await connectors.forWebhook(connectorName, connectorAccountId);
      if (!connector?.parseWebhook) return undefined;
      let parsed: WebhookResult;
      try {
        parsed = await connector.parseWebhook(webhook);
      } catch (error) {
        if (error instanceof CallInTransactionError) throw error;
        log.warn({ err: error, connector: connectorName }, 'provider webhook could not be read');
        return { received: true };
      }
      if (parsed.verified && parsed.refundId) {
        // A refund's webhook is not applied as it is either: the reconciler asks about it now.
        const asked = await deps.askAboutRefund(connectorAccountId, parsed.refundId);
        log.info(
          { refund_id: parsed.refundId, connector: connectorName, waiting: asked },
          'provider refund webhook; asking the provider',
        );
        return { received: true };
      }
      if (!parsed.paymentId) return { received: true };
      const payment = await repo.findById(db, parsed.paymentId);
      // Only a payment that went through this very provider account can be named by its webhooks.
      if (
        !payment ||
        payment.connector !== connectorName ||
        payment.connector_account_id !== connectorAccountId
      ) {
        return { received: true };
      }
      if (parsed.verified && parsed.status) {
        // A redelivery of an event already applied is skipped (applying it again would change
        // nothing either: the answer goes through the same compare-and-set moves).
        const eventId = parsed.eventId;
        if (eventId && (await webhookEvents.seenWebhookEvent(connectorAccountId, eventId)))
          return { received: true };
        await states.apply(payment.id, parsed.status, { asked: false, seen: payment });
        if (eventId) await webhookEvents.rememberWebhookEvent(connectorAccountId, eventId);
      } else {
        log.info(
          { payment_id: payment.id, connector: connectorName, verified: parsed.verified },
          'provider webhook not applied; asking the provider',
        );
        await repo.syncSoon(db, payment.id, clock.now());
      }
      return { received: true };
    },
  };
}

export type ProviderReturns = ReturnType<typeof createProviderReturns>;
