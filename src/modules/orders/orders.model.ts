import type { Metadata } from '../../domain/metadata.js';
import type { CreatedRange, PageQuery } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';
import type { OrderStatus } from './order.transitions.js';

/** What creating an order takes (the API's body; its schema bounds the lengths). */
export interface CreateOrder {
  /** In the smallest currency sub-unit. */
  amount: number;
  currency: string;
  receipt?: string;
  metadata?: Metadata;
}

/** Which orders a list shows, newest first. */
export interface OrderListFilter extends PageQuery, CreatedRange {
  status?: OrderStatus;
  receipt?: string;
}

/** The order as the API, the dashboard and the event payloads show it. */
export interface Order {
  id: string;
  entity: 'order';
  amount: number;
  currency: string;
  status: OrderStatus;
  receipt: string | null;
  metadata: Record<string, unknown>;
  /** Unix seconds. */
  created_at: number;
  return_url: string | null;
  amount_paid: number;
  bank_details: Record<string, unknown> | null;
  return_method: string;
  amount_pending: number;
}

/** An orders row as the orders repository reads it (the payments module reads orders through the orders service). */
export interface OrderRow {
  id: string;
  account_id: string;
  mode: Mode;
  amount: string;
  currency: string;
  status: OrderStatus;
  receipt: string | null;
  metadata: Record<string, unknown>;
  return_url: string | null;
  return_method: string;
  amount_paid: string;
  bank_details: Record<string, unknown> | null;
  created_at: Date;
}
